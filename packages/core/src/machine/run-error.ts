import { safeInstanceOf, safeProp, safeString, thrownMessage } from '../util/safe-error.js';
import type { RunError } from './run-types.js';

/** The longest code kept: codes are UPPER_SNAKE names, never prose. */
const CODE_CHARS = 64;

/**
 * Summarises a thrown value as the `RunError` a run stores, bounded as stored: its JSON encoding (code, name,
 * message, truncated) is at most `limitBytes` bytes, whatever the message holds (characters JSON escapes take more
 * than their own bytes). The code is the error's own UPPER_SNAKE `code`, or its cause's, else `BUSINESS_ERROR`; a
 * wrapper's message keeps its cause's message. Any value may be thrown: it is read without running its own hooks
 * (`toString`, getters that throw, Proxy traps), so the summary is always made. Pure.
 */
export function summarizeError(error: unknown, limitBytes: number): RunError {
  const isError = safeInstanceOf(error, Error);
  const causeValue = isError ? safeProp(error, 'cause') : undefined;
  const cause = safeInstanceOf(causeValue, Error) ? causeValue : null;
  // A DocketError's code is UPPER_SNAKE too: read the same way.
  let code = codeOf(error);
  if (code === 'BUSINESS_ERROR' && cause) code = codeOf(cause);
  let message = thrownMessage(error);
  // Wrappers (ORMs, drivers) often keep the useful part in `cause`: keep it in the summary.
  const causeMessage = cause ? thrownMessage(cause) : '';
  if (causeMessage !== '' && !message.includes(causeMessage)) message = `${message}: ${causeMessage}`;
  const name = cutToBytes(isError ? safeString(error, 'name', 'Error') : typeof error, Math.floor(limitBytes / 4));
  const whole: RunError = { code: code.slice(0, CODE_CHARS), name, message, truncated: false };
  if (encodedBytes(whole) <= limitBytes) return whole;
  // The longest prefix whose encoding fits, by binary search: escapes make the encoding longer than the text.
  const cut: RunError = { ...whole, message: '', truncated: true };
  let fits = 0;
  let over = message.length;
  while (fits < over) {
    const mid = Math.ceil((fits + over) / 2);
    cut.message = prefix(message, mid);
    if (encodedBytes(cut) <= limitBytes) fits = mid;
    else over = mid - 1;
  }
  cut.message = prefix(message, fits);
  return cut;
}

/** The first `length` UTF-16 units of `text`, one fewer when that would split a surrogate pair. */
function prefix(text: string, length: number): string {
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}

function codeOf(error: unknown): string {
  const code = safeProp(error, 'code');
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code) ? code : 'BUSINESS_ERROR';
}

function encodedBytes(error: RunError): number {
  return Buffer.byteLength(JSON.stringify(error), 'utf8');
}

/** The longest prefix of `text` within `bytes` UTF-8 bytes that does not split a character. */
function cutToBytes(text: string, bytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= bytes) return text;
  return Buffer.from(text, 'utf8')
    .subarray(0, Math.max(0, bytes))
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
}
