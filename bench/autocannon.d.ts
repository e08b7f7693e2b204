/** The part of autocannon's API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    duration?: number;
    amount?: number;
    timeout?: number;
  }

  type Tracker = EventEmitter & PromiseLike<{ duration: number; [key: string]: unknown }>;

  function autocannon(options: Options): Tracker;
  export default autocannon;
}
