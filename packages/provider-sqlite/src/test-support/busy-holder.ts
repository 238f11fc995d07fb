// A child process that holds the write lock of a database for a while, then lets go.
// Usage: node --conditions=@crewline/source --import tsx busy-holder.ts <location> <holdMs>
import Database from 'better-sqlite3';

const [location, holdMs] = process.argv.slice(2);
const db = new Database(location!);
db.exec('BEGIN IMMEDIATE');
process.stdout.write('locked\n');
setTimeout(() => {
  db.exec('COMMIT');
  db.close();
}, Number(holdMs));
