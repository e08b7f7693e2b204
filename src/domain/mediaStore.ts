import { Lru } from '../lib/lru.js';
import { encodeMp3 } from '../media/mp3.js';
import { encodeMp4 } from '../media/mp4.js';
import { encodePng } from '../media/png.js';
import { encodeWav, type WavOptions } from '../media/wav.js';

/** Parses "WIDTHxHEIGHT" (an image size or a video resolution). */
export const parseSize = (size: string): [number, number] => size.split('x').map(Number) as [number, number];

/**
 * Every media body the mock sends, made on first use and kept in a cache bounded in entries and bytes:
 * the same parameters give the same bytes, so a body is made once however often it is asked for
 * (image URLs fetched after generation, repeated speech). Handlers ask it; none makes media itself.
 */
export class MediaStore {
  private readonly cache: Lru<Buffer>;

  constructor(
    limits: { readonly entries: number; readonly bytes: number },
    private readonly fps: number,
  ) {
    this.cache = new Lru<Buffer>(limits.entries, limits.bytes);
  }

  /** Bodies kept now, and their bytes: the cache's bounds hold however many distinct bodies are asked for. */
  get size(): number {
    return this.cache.size;
  }

  get totalBytes(): number {
    return this.cache.totalBytes;
  }

  private get(key: string, make: () => Buffer): Buffer {
    return this.cache.getOrMake(key, make, (b) => b.length);
  }

  /** A PNG of the given size and seed. */
  png(width: number, height: number, seed: number): Buffer {
    return this.get(`png:${width}x${height}:${seed}`, () => encodePng(width, height, seed));
  }

  /** An MP4 of the given resolution ("1280x768"), duration in seconds and seed. */
  mp4(resolution: string, duration: number, seed: number): Buffer {
    const [width, height] = parseSize(resolution);
    return this.get(`mp4:${resolution}:${duration}:${seed}`, () =>
      encodeMp4({ width, height, durationSeconds: duration, seed, fps: this.fps }),
    );
  }

  /** An MP3 of silent frames: it depends only on its length. */
  mp3(seconds: number): Buffer {
    return this.get(`mp3:${seconds.toFixed(3)}`, () => encodeMp3(seconds));
  }

  /** A RIFF WAV in the named output format. */
  wav(formatName: string, options: WavOptions): Buffer {
    const { durationSeconds, seed, pitchPercent } = options;
    return this.get(`wav:${formatName}:${durationSeconds.toFixed(3)}:${seed}:${pitchPercent ?? 0}`, () =>
      encodeWav(options),
    );
  }
}
