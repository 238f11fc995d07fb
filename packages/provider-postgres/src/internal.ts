// For crewline's own packages (the worker), not part of the public API: it may change in any release.

export { connectionLost, connectionLostWithin, refusalMayPass } from './connection-lost.js';
export { databaseNotAccepting } from './errors.js';
export { credentialParameters } from './location.js';
export { withPooledClient } from './pooled-client.js';
export { SocketClosingClient, socketOf } from './socket-closing-client.js';
