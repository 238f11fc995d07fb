// What `crewline worker` loads in this directory: the runs it may take, by name. The crew is the one
// docs/many-machines.md and packages/worker/README.md show (two tasks, the offline model), kept in
// one file; in your own project, put that file's content here.
export { default } from '../../packages/worker/src/examples/readme-config.js';
