import { describe, expect, it } from 'vitest';
import { SerialLane } from './serial-lane.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('SerialLane', () => {
  it('runs one task at a time, urgent ones before the others still waiting, each kind in order', async () => {
    const lane = new SerialLane();
    const order: string[] = [];
    let running = 0;
    let most = 0;
    const task = (name: string) => async () => {
      running += 1;
      most = Math.max(most, running);
      await tick();
      order.push(name);
      running -= 1;
    };
    lane.run(task('index 1'));
    lane.run(task('index 2'));
    lane.run(task('index 3'));
    lane.run(task('spare 1'), { urgent: true });
    lane.run(task('spare 2'), { urgent: true });
    await lane.idle();
    // "index 1" had started already; the spares go before the index entries still waiting.
    expect(order).toEqual(['index 1', 'spare 1', 'spare 2', 'index 2', 'index 3']);
    expect(most).toBe(1);
  });

  it('goes on after a failed task, and idle() waits for tasks queued while waiting', async () => {
    const lane = new SerialLane();
    const done: string[] = [];
    lane.run(async () => {
      throw new Error('failed');
    });
    lane.run(async () => {
      await tick();
      done.push('second');
      lane.run(async () => void done.push('queued meanwhile'));
    });
    await lane.idle();
    expect(done).toEqual(['second', 'queued meanwhile']);
  });
});
