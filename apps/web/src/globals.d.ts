/** Unique id of this build, set by vite.config.ts (also written to dist/build-info.json). */
declare const __FLOTILLA_BUILD_ID__: string;
