import { StrictMode } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import { captureToken } from './lib/token';
import './styles.css';

captureToken();
const root = createRoot(document.getElementById('root')!);
// Rendered now rather than at React's next task: with the data the server put in the page, the
// first frame the browser paints (and a headless `--screenshot`) already shows it.
flushSync(() =>
  root.render(
    <StrictMode>
      <App />
    </StrictMode>,
  ),
);
