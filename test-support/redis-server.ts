import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

/** The redis-server the tests start: `KFORGE_REDIS_SERVER`, else Debian's. */
export const REDIS_SERVER = process.env.KFORGE_REDIS_SERVER ?? '/usr/bin/redis-server';

/** Why Redis tests cannot run here, or false when they can. */
export function redisUnavailable(): string | false {
  if (!existsSync(REDIS_SERVER)) return `no redis-server at ${REDIS_SERVER} (apt-get install redis-server, or set KFORGE_REDIS_SERVER)`;
  const version = spawnSync(REDIS_SERVER, ['--version'], { encoding: 'utf8' });
  return version.status === 0 ? false : `${REDIS_SERVER} --version failed: ${version.stderr}`;
}

/** A free TCP port on loopback (asked of the kernel, then released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A redis-server of a test: its own port and data folder (append-only file on, fsync always). */
export interface TestRedis {
  url: string;
  port: number;
  directory: string;
  process: ChildProcess;
  /** Stops it (SIGTERM: it writes its data first) and waits for the exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data folder. */
  restart(): Promise<void>;
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis-server did not listen on ${port} within ${timeoutMs} ms`);
}

function launch(port: number, directory: string): ChildProcess {
  const child = spawn(
    REDIS_SERVER,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      directory,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--save',
      '',
      '--daemonize',
      'no',
      '--logfile',
      path.join(directory, 'redis.log'),
    ],
    { stdio: 'ignore' },
  );
  return child;
}

/** Starts a redis-server on a free loopback port with its data in `directory`. */
export async function startTestRedis(directory: string): Promise<TestRedis> {
  await mkdir(directory, { recursive: true });
  const port = await freePort();
  const redis: TestRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    directory,
    process: launch(port, directory),
    stop: async () => {
      const child = redis.process;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
    restart: async () => {
      await redis.stop();
      redis.process = launch(port, directory);
      await waitForPort(port, 10_000);
    },
  };
  await waitForPort(port, 10_000);
  return redis;
}
