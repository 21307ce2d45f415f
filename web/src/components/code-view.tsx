import { useEffect, useState } from 'react';
import type { CodeLanguage } from '../lib/highlight';

const escapeHtml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const plain = (source: string): string =>
  source
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => `<span class="line">${escapeHtml(line)}</span>`)
    .join('\n');

/**
 * Code with line numbers, highlighted once the highlighter chunk has loaded (plain until then,
 * so the text is readable at once).
 */
export function CodeView({ source, language = 'python', maxHeight, testId }: { source: string; language?: CodeLanguage; maxHeight?: number; testId?: string }) {
  const [html, setHtml] = useState(() => plain(source));
  useEffect(() => {
    let cancelled = false;
    setHtml(plain(source));
    if (language === 'text') return;
    void import('../lib/highlight')
      .then(({ highlight }) => highlight(source, language))
      .then((highlighted) => {
        if (!cancelled) setHtml(highlighted);
      })
      .catch(() => undefined);
    return () => {
      cancelled = true;
    };
  }, [source, language]);
  return (
    <div className="code-frame">
      <pre
        className={`code ${language === 'text' ? 'plain' : ''}`}
        style={maxHeight ? { maxHeight } : undefined}
        data-testid={testId}
        // biome-ignore lint/security/noDangerouslySetInnerHtml: the HTML is shiki's highlighting or plain() above, both of which escape the source text.
        dangerouslySetInnerHTML={{ __html: html }}
      />
    </div>
  );
}
