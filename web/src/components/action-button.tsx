import { useState, type ReactNode } from 'react';

/** A button that runs an async action, shows that it is busy, and shows why it failed. */
export function ActionButton({
  onClick,
  children,
  className = 'btn',
  disabled = false,
  title,
  testId,
}: {
  onClick: () => Promise<unknown>;
  children: ReactNode;
  className?: string;
  disabled?: boolean;
  title?: string;
  testId?: string;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await onClick();
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <span style={{ display: 'inline-flex', flexDirection: 'column', gap: 2 }}>
      <button
        className={className}
        disabled={disabled || busy}
        onClick={() => void run()}
        {...(title ? { title } : {})}
        {...(testId ? { 'data-testid': testId } : {})}
      >
        {busy ? <span className="spinner" style={{ width: 12, height: 12 }} /> : null}
        {children}
      </button>
      {error ? (
        <span className="error-text" role="alert">
          {error}
        </span>
      ) : null}
    </span>
  );
}
