// A child process that leaves a hot rollback journal: it opens a database in rollback-journal mode,
// writes far more than its one-page cache holds inside one transaction (so the journal is synced and
// pages reach the file before the commit), and kills itself before committing — what a process
// killed while it created a database (the switch to WAL goes through a rollback journal) leaves.
// Usage: hot-journal-writer.ts <database>
import Database from 'better-sqlite3';

const [location] = process.argv.slice(2) as [string];
const db = new Database(location);
db.pragma('journal_mode = DELETE');
db.pragma('cache_size = 1');
db.exec('BEGIN IMMEDIATE');
const insert = db.prepare('INSERT INTO chunks (body) VALUES (?)');
for (let index = 0; index < 2000; index += 1) insert.run(`v"${'y'.repeat(500)}"`);
process.kill(process.pid, 'SIGKILL');
