import { useState } from 'react';
import type { BuildDetailsView } from '../../../src/server/api-types';
import { bytes } from '../lib/format';
import { CodeView } from './code-view';

/** Registers, shared memory and spills per kernel, then the PTX and SASS of a CUDA build. */
export function BuildView({ build }: { build: BuildDetailsView }) {
  const [listing, setListing] = useState<'sass' | 'ptx'>('sass');
  const text = listing === 'sass' ? build.sass : build.ptx;
  return (
    <div data-testid="build-view">
      {build.error ? <p className="notice">{build.error}</p> : null}
      <div className="table-scroll">
        <table className="data figures">
          <thead>
            <tr>
              <th>kernel</th>
              <th>arch</th>
              <th className="num">registers / thread</th>
              <th className="num">shared memory / block</th>
              <th className="num">stack</th>
              <th className="num">local (spills)</th>
            </tr>
          </thead>
          <tbody>
            {build.kernels.map((kernel, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: one build's kernel table, listed once and never reordered; no field is unique on its own.
              <tr key={index}>
                <td className="mono wrap name">{kernel.name}</td>
                <td>{kernel.arch ?? '–'}</td>
                <td className="num" style={kernel.registers !== null && kernel.registers >= 255 ? { color: 'var(--danger)', fontWeight: 600 } : undefined}>
                  {kernel.registers ?? '–'}
                </td>
                <td className="num">{bytes(kernel.sharedBytes)}</td>
                <td className="num">{bytes(kernel.stackBytes)}</td>
                <td className="num" style={kernel.localBytes ? { color: 'var(--danger)', fontWeight: 600 } : undefined}>
                  {kernel.localBytes ? `${bytes(kernel.localBytes)} — spills` : bytes(kernel.localBytes)}
                </td>
              </tr>
            ))}
            {build.kernels.length === 0 ? (
              <tr>
                <td colSpan={6} className="muted">
                  No kernels were found in the built extension.
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
      <div className="form-row" style={{ margin: '14px 0 8px' }}>
        <button type="button" className={`btn small ${listing === 'sass' ? 'primary' : ''}`} onClick={() => setListing('sass')}>
          SASS
        </button>
        <button type="button" className={`btn small ${listing === 'ptx' ? 'primary' : ''}`} onClick={() => setListing('ptx')}>
          PTX
        </button>
        <span className="muted">{text ? `${text.replace(/\n$/, '').split('\n').length} lines` : ''}</span>
      </div>
      {text ? <CodeView source={text} language="text" maxHeight={460} /> : <p className="muted">No {listing.toUpperCase()} was captured.</p>}
    </div>
  );
}
