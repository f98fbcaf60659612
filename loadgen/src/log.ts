/** pino logger for the chain and the CLI (JSON lines on stdout; `silent` in tests). */
import pino, { type Logger } from 'pino';

export function makeLogger(level: string, name = 'chain'): Logger {
  return pino({ name, level, base: { pid: process.pid } });
}
