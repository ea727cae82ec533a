/** `@docket/cli`: the `docket` command as a function, for embedding and tests (`main(argv, io)` returns the exit code). */
export { type Io, main, processIo } from './main.js';
