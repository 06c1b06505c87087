// What the console benchmark's child process renders and reads with, bundled as the build bundles
// the console (build.ts, `bundleConsoleParts`); from the sources, the child loads these modules
// themselves.
export { openStore } from "../../engine/index.js";
export { Console, RENDER_OPTIONS } from "../../source/console/app.js";
export { diffedScreen } from "../../source/console/screen-diff.js";
