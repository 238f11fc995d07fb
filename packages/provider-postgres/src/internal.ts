// For crewline's own packages (the worker), not part of the public API: it may change in any release.
export { SocketClosingClient, socketOf } from './socket-closing-client.js';
