// The console's small shared pieces: error notes, busy buttons, dates, confirmations.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

/** An API failure as a reader sees it: what happened, its code and request id. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const apiError = error instanceof ApiError ? error : null;
  const message = error instanceof Error ? error.message : 'Something went wrong.';
  return (
    <p class="error" role="alert">
      {message}
      {apiError && (
        <span class="error-meta">
          {' '}
          ({apiError.code}
          {apiError.requestId ? `, request id ${apiError.requestId}` : ''})
        </span>
      )}
    </p>
  );
}

/** Runs an async action, keeping its failure to show and whether it is under way. */
export function useAction(): {
  busy: boolean;
  error: unknown;
  run: (action: () => Promise<void>) => Promise<void>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return {
    busy,
    error,
    clear: () => setError(null),
    run: async (action) => {
      setBusy(true);
      setError(null);
      try {
        await action();
      } catch (e) {
        setError(e);
      } finally {
        setBusy(false);
      }
    },
  };
}

export const when = (iso: string | null | undefined) =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' }) : '';

/**
 * A modal that asks to type `expected` before `onConfirm` may run: for what cannot be undone.
 */
export function TypedConfirm(props: {
  title: string;
  expected: string;
  action: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [typed, setTyped] = useState('');
  const { busy, error, run } = useAction();
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" onClose={props.onClose}>
      <h2 id="confirm-title">{props.title}</h2>
      {props.children}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(props.onConfirm);
        }}
      >
        <label>
          Type <code>{props.expected}</code> to confirm
          <input
            value={typed}
            autoComplete="off"
            spellcheck={false}
            onInput={(e) => setTyped(e.currentTarget.value)}
          />
        </label>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="submit" class="danger" disabled={typed !== props.expected || busy}>
            {props.action}
          </button>
        </div>
      </form>
    </dialog>
  );
}
