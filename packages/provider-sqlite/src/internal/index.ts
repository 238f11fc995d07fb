// For crewline's own packages (bench's fuzz trials build damaged databases with these) and nothing
// else. Not part of the public API: any name here may change or go in any release. Build on `.`.

export { APPLICATION_MARKER, SCHEMA_VERSION } from '../database/schema.js';
