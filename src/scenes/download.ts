/**
 * Saves a file in the browser: a Blob (or text) under a name, through a transient link. The one download helper of
 * the app (the postmortem export, the alert rules' export, the inspector's CSV).
 */
export function download(name: string, data: Blob | string, type = 'application/json'): void {
  const blob = typeof data === 'string' ? new Blob([data], { type }) : data;
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  // Revoked later: some browsers read the object URL after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
