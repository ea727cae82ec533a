import type { Operator } from '@docket/core';
import { isDocketError } from '@docket/core';

/**
 * The dashboard's one script, served from `/assets/live.js` (the CSP allows scripts from the dashboard itself only):
 * every second, while the page is visible and live is on, it asks `/live` whether the changes feed moved past the
 * cursor the page was rendered at; if so it fetches the page again and swaps its `<main>`, unless the user is
 * typing into a form there. The header's button turns it off and on (kept in localStorage).
 */
export const LIVE_SCRIPT = `(() => {
  const root = document.documentElement;
  const base = root.dataset.base || '';
  let after = root.dataset.feed || '';
  const toggle = document.getElementById('live-toggle');
  if (!toggle || after === '') return;
  let on = localStorage.getItem('docket-live') !== 'off';
  const show = () => {
    toggle.setAttribute('aria-pressed', String(on));
    toggle.textContent = on ? 'Live: on' : 'Live: off';
  };
  toggle.addEventListener('click', () => {
    on = !on;
    localStorage.setItem('docket-live', on ? 'on' : 'off');
    show();
  });
  show();
  const typing = () => {
    const active = document.activeElement;
    if (active && active.closest('main form')) return true;
    return [...document.querySelectorAll('main input[type=text], main textarea')].some((input) => input.value !== '');
  };
  const refresh = async () => {
    const answer = await fetch(location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } });
    if (!answer.ok) return;
    const fresh = new DOMParser().parseFromString(await answer.text(), 'text/html').querySelector('main');
    const main = document.querySelector('main');
    if (fresh && main) {
      main.replaceWith(fresh);
      document.dispatchEvent(new CustomEvent('docket:refreshed'));
    }
  };
  let stale = false;
  const tick = async () => {
    try {
      if (on && !document.hidden) {
        const answer = await fetch(base + '/live?after=' + encodeURIComponent(after), { credentials: 'same-origin' });
        if (answer.ok) {
          const moved = await answer.json();
          after = moved.next;
          if (moved.count > 0) stale = true;
        }
        if (stale && !typing()) {
          stale = false;
          await refresh();
        }
      }
    } catch {
      // The server is away for a moment: the next tick asks again.
    }
    setTimeout(tick, 1000);
  };
  setTimeout(tick, 1000);
})();
`;

/** What `/live` answers: the cursor to ask with next, and how many entries came after the one asked with. */
export interface LiveAnswer {
  next: string;
  count: number;
}

/**
 * `/live?after=<cursor>`: how far the feed moved past `after` (up to 1,000 entries counted). Without a cursor, or with
 * one that is invalid or expired, the answer is the cursor after the newest entry, and a count that says "refresh"
 * when a cursor was given (what the page shows may be older than what is kept).
 */
export async function liveAnswer(operator: Operator, after: string | undefined): Promise<LiveAnswer> {
  if (after === undefined || after === '') return { next: await feedHead(operator), count: 0 };
  try {
    const page = await operator.changes({ after, limit: 1000 });
    return { next: page.next, count: page.items.length };
  } catch (error) {
    if (!isDocketError(error, 'CURSOR_EXPIRED') && !isDocketError(error, 'CURSOR_INVALID')) throw error;
    return { next: await feedHead(operator), count: 1 };
  }
}

/** The cursor after the newest entry, which a page is rendered at. */
export async function feedHead(operator: Operator): Promise<string> {
  return (await operator.changes({ from: 'now' })).next;
}
