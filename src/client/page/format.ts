/**
 * @module
 * Text for the page: ages as `kubectl get` prints them (apimachinery `duration.HumanDuration`)
 * and short times for the event log.
 */

/** `45s`, `3m12s`, `17m`, `5h3m`, `14h`, `3d4h`, `12d`, `2y`. */
export function age(createdAt: string | undefined, now = Date.now()): string {
  if (!createdAt) return "";
  const seconds = Math.max(0, Math.floor((now - Date.parse(createdAt)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (days < 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  return `${Math.floor(days / 365)}y`;
}

/** `14:03:07` in the viewer's locale. */
export const clock = (date = new Date()): string => date.toLocaleTimeString(undefined, { hour12: false });

export const plural = (n: number, word: string, words = `${word}s`): string => `${n.toLocaleString()} ${n === 1 ? word : words}`;

/** `in 0.4 s`, `now`. */
export const after = (ms: number): string => (ms <= 0 ? "now" : `in ${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`);
