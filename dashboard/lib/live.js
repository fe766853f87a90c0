// Pages that refresh on their own: a timer that pauses while the tab is hidden or a dialog is
// open, and the status line that says whether the last refresh reached the gateway.

import { h } from './dom.js';

/**
 * The status line: "Live · updated 12:00:03", or "Offline" once a refresh fails (the page then
 * keeps showing the last data it got). Only the state word is a live region, so a screen reader
 * hears "Offline" and "Live" when the state changes, not a new time every few seconds.
 */
export function liveStatus() {
  const state = h('span', { class: 'live-state', role: 'status', text: 'Loading' });
  const time = h('span', { class: 'live-time' });
  const element = h('span', { class: 'live muted', dataset: { state: 'loading', testid: 'live-status' } }, state, time);
  let lastSuccess = null;
  const set = (name, word) => {
    if (element.dataset.state === name) return;
    element.dataset.state = name;
    state.textContent = word;
  };
  return {
    element,
    /** A refresh answered. */
    ok() {
      lastSuccess = new Date();
      set('live', 'Live');
      time.textContent = ` · updated ${lastSuccess.toLocaleTimeString()}`;
    },
    /** A refresh failed: the data shown is stale (or missing). */
    failed() {
      set('offline', 'Offline');
      time.textContent = lastSuccess === null ? ' · no data yet' : ` · data from ${lastSuccess.toLocaleTimeString()}`;
    },
  };
}

/** Whether an ApiError means the gateway did not answer (down, or a proxy's 5xx), not a refusal. */
export function unreachable(error) {
  return error.status === 0 || (error.status >= 500 && !error.featureOff);
}

/**
 * Runs `refresh` now and every `intervalMs`; skipped while the tab is hidden or a dialog is open
 * (and while the previous run is still going), run at once when the tab shows again. Returns
 * the function that stops it.
 */
export function every(intervalMs, refresh) {
  let running = false;
  let timer = null;
  const tick = async () => {
    if (running || document.hidden || document.querySelector('dialog[open]')) return;
    running = true;
    try {
      await refresh();
    } finally {
      running = false;
    }
  };
  const start = () => {
    clearInterval(timer);
    timer = document.hidden ? null : setInterval(tick, intervalMs);
  };
  const onVisibility = () => {
    start();
    if (!document.hidden) tick();
  };
  document.addEventListener('visibilitychange', onVisibility);
  tick();
  start();
  return () => {
    clearInterval(timer);
    document.removeEventListener('visibilitychange', onVisibility);
  };
}
