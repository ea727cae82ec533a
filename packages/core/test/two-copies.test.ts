import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DocketError, isDocketError } from '../src/index.js';

describe('DocketError from another copy of @docket/core', () => {
  it('is recognised by isDocketError and instanceof, in both directions', async () => {
    // A second module instance of the built package: what two installed copies give an application.
    const url = `${pathToFileURL(new URL('../dist/index.js', import.meta.url).pathname).href}?second-copy`;
    const other = (await import(/* @vite-ignore */ url)) as typeof import('../src/index.js');
    expect(other.DocketError).not.toBe(DocketError);
    const foreign = new other.DocketError('QUEUE_CLOSED', 'closed elsewhere');
    expect(isDocketError(foreign)).toBe(true);
    expect(isDocketError(foreign, 'QUEUE_CLOSED')).toBe(true);
    expect(isDocketError(foreign, 'CONFIG_INVALID')).toBe(false);
    expect(foreign instanceof DocketError).toBe(true);
    const ours = new DocketError('CONFIG_INVALID', 'bad');
    expect(other.isDocketError(ours, 'CONFIG_INVALID')).toBe(true);
    expect(ours instanceof other.DocketError).toBe(true);
    expect(isDocketError(new Error('plain'))).toBe(false);
    expect(isDocketError(Object.assign(new Error('looks alike'), { name: 'DocketError', code: 'QUEUE_CLOSED' }))).toBe(
      false,
    );
  });
});
