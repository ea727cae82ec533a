// Starts a flow worker process and resolves `ready` once it printed so; a worker that exits early rejects it.
import { spawn } from 'node:child_process';

/** Spawns `node <script> ...args` as the worker `id`: answers `{ id, proc, ready }`. */
export function spawnFlowWorker(id, script, args) {
  const proc = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (chunk) => {
    stderr += chunk.toString();
  });
  const ready = new Promise((resolve, reject) => {
    proc.stdout.on('data', (chunk) => {
      if (chunk.toString().includes('ready')) resolve();
    });
    proc.on('exit', (code, signal) =>
      reject(new Error(`worker ${id} exited (${code ?? signal}) before ready: ${stderr}`)),
    );
  });
  return { id, proc, ready };
}
