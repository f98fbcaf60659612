/** URL sync of the app's SceneApps (App.tsx, OtherPages.tsx): the URL is written on open, each change is a history step. */
export const SCENE_APP_URL_SYNC = { updateUrlOnInit: true, createBrowserHistorySteps: true };
