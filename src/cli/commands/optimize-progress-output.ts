import picocolors from 'picocolors';
import { progressLine } from '../../agent/run/progress-lines.js';
import type { SearchEvent } from '../../agent/search/state/search-events.js';
import type { CliIo } from '../io/cli-io.js';
import { LiveProgressView, type TerminalStream } from '../rendering/live-progress-view.js';

/** Search events that only a live view shows; the line-by-line form keeps one line per outcome. */
const LIVE_ONLY_EVENTS: ReadonlySet<SearchEvent['type']> = new Set(['model-called', 'candidate-submitted', 'candidate-stage']);

/** Progress on stderr: where the command writes notices, and where search events go. */
export interface ProgressOutput {
  onEvent: (event: SearchEvent) => void;
  /** A notice line (ends with a newline), written above a live view. */
  notice: (text: string) => void;
  /** Ends a live view, leaving its last frame. */
  stop: () => void;
}

/** A live view redrawn in place on a terminal (fitted to its size), one logfmt line per event otherwise. */
export function progressOutput(io: CliIo, terminal: boolean): ProgressOutput {
  const stderr = io.stderr;
  if (!terminal) {
    return {
      onEvent: (event) => void (LIVE_ONLY_EVENTS.has(event.type) || stderr.write(`${progressLine(event)}\n`)),
      notice: (text) => void stderr.write(text),
      stop: () => undefined,
    };
  }
  const view = new LiveProgressView({ stream: stderr as TerminalStream, colors: picocolors.createColors(io.color && !io.environment.NO_COLOR) });
  return { onEvent: view.onEvent, notice: (text) => view.log(text), stop: () => view.stop() };
}
