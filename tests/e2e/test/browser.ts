// Debian's Chromium driven by playwright-core, as the browser tests use it, and what they check
// in a screenshot.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import zlib from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';
import { repoRoot } from './support.js';

/** Chromium installed with apt when missing (tools/stack/src/browser.mjs), then launched. */
export async function launchChromium(): Promise<Browser> {
  const found = execFileSync(
    'node',
    [path.join(repoRoot, 'tools', 'stack', 'src', 'browser.mjs')],
    {
      encoding: 'utf8',
      timeout: 600_000,
    },
  );
  const executablePath = found.trim().split('\n').at(-1)!;
  return chromium.launch({ executablePath, args: ['--no-sandbox'] });
}

export interface Picture {
  width: number;
  height: number;
  /** RGBA, row by row. */
  pixels: Buffer;
}

/** A PNG as Chromium writes its screenshots: 8-bit RGB or RGBA, not interlaced. */
export function decodePng(png: Buffer): Picture {
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    const body = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [depth, colour, , , interlace] = body.subarray(8, 13);
      if (depth !== 8 || interlace !== 0 || (colour !== 2 && colour !== 6)) {
        throw new Error(`PNG of depth ${depth}, colour type ${colour}, interlace ${interlace}`);
      }
      channels = colour === 6 ? 4 : 3;
    } else if (type === 'IDAT') data.push(body);
    offset += 12 + length;
  }
  const raw = zlib.inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const rows = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y += 1) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x += 1) {
      const a = x >= channels ? rows[y * stride + x - channels]! : 0;
      const b = y > 0 ? rows[(y - 1) * stride + x]! : 0;
      const c = x >= channels && y > 0 ? rows[(y - 1) * stride + x - channels]! : 0;
      const p = a + b - c;
      const paeth =
        Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c)
          ? a
          : Math.abs(p - b) <= Math.abs(p - c)
            ? b
            : c;
      const predictor = [0, a, b, (a + b) >> 1, paeth][filter] ?? 0;
      rows[y * stride + x] = (line[x]! + predictor) & 0xff;
    }
  }
  const pixels = Buffer.alloc(width * height * 4, 0xff);
  for (let i = 0; i < width * height; i += 1)
    rows.copy(pixels, i * 4, i * channels, i * channels + 3);
  return { width, height, pixels };
}

/** The share of pixels that are not (near) white, and how many distinct colours there are. */
export function inkOf(picture: Picture): { share: number; colours: number } {
  let ink = 0;
  const colours = new Set<number>();
  for (let i = 0; i < picture.pixels.length; i += 4) {
    const [r, g, b] = [picture.pixels[i]!, picture.pixels[i + 1]!, picture.pixels[i + 2]!];
    if (r < 240 || g < 240 || b < 240) ink += 1;
    colours.add((r << 16) | (g << 8) | b);
  }
  return { share: ink / (picture.width * picture.height), colours: colours.size };
}

/** Whether the box (in CSS pixels, at device scale 1) holds a pixel near `rgb`. */
export function boxHolds(
  picture: Picture,
  box: { x: number; y: number; width: number; height: number },
  rgb: [number, number, number],
): boolean {
  for (
    let y = Math.max(0, Math.floor(box.y));
    y < Math.min(picture.height, box.y + box.height);
    y += 1
  ) {
    for (
      let x = Math.max(0, Math.floor(box.x));
      x < Math.min(picture.width, box.x + box.width);
      x += 1
    ) {
      const i = (y * picture.width + x) * 4;
      if (rgb.every((v, k) => Math.abs(picture.pixels[i + k]! - v) <= 12)) return true;
    }
  }
  return false;
}
