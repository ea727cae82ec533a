import { describe, expect, it } from 'vitest';
import { displayWidth, paint, table, useColour } from './format.js';

describe('colour conventions', () => {
  it('follows NO_COLOR and FORCE_COLOR, else colours only a terminal', () => {
    const tty = { isTTY: true };
    const pipe = { isTTY: false };
    expect(useColour(tty, {})).toBe(true);
    expect(useColour(pipe, {})).toBe(false);
    expect(useColour(tty, { NO_COLOR: '1' })).toBe(false);
    expect(useColour(tty, { NO_COLOR: '' })).toBe(true);
    expect(useColour(pipe, { FORCE_COLOR: '1' })).toBe(true);
    expect(useColour(pipe, { FORCE_COLOR: '' })).toBe(true);
    expect(useColour(tty, { FORCE_COLOR: '0' })).toBe(false);
    expect(useColour(tty, { FORCE_COLOR: 'false' })).toBe(false);
    expect(useColour(pipe, { NO_COLOR: 'x', FORCE_COLOR: '1' })).toBe(false);
  });
});

describe('tables by display width', () => {
  it('counts wide characters and emoji as two columns, combining marks and colour codes as none', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('発注')).toBe(4);
    expect(displayWidth('😀')).toBe(2);
    expect(displayWidth('e\u0301')).toBe(1);
    expect(displayWidth(paint('failed', true))).toBe(6);
  });

  it('aligns columns holding CJK text and emoji', () => {
    const lines = table(
      ['TASK', 'STATUS'],
      [
        ['発注@1', 'success'],
        ['ship😀@1', 'failed'],
        ['ascii@1', 'running'],
      ],
    ).split('\n');
    const statusColumn = lines.map((line) =>
      displayWidth(line.slice(0, line.search(/(STATUS|success|failed|running)$/))),
    );
    expect(new Set(statusColumn).size).toBe(1);
  });
});
