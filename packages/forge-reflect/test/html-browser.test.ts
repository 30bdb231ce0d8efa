/**
 * The HTML report in a real browser: Debian's Chromium driven by playwright-core (no browser
 * download), the network cut off. Fails on any console error or any request that is not the page's
 * own file; checks each chart's marks against the known corpus; saves a screenshot.
 * Skipped, loudly, only when /usr/bin/chromium is missing (`.ci/run` installs it first).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIDENCES, TOOL_CALLS, TURNS, writeHtmlCorpus } from './helpers/html-corpus.js';
import { cleanupTempDirs, CLI, KIT_ROOT, tempDir } from './helpers/spool.js';

const CHROMIUM = process.env.FORGE_TEST_CHROMIUM ?? '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
if (!present) {
  console.warn(
    `\n*** SKIPPED: the HTML report's browser test: no Chromium at ${CHROMIUM}. Install it with: apt-get install -y chromium (or bash scripts/ci/ensure-chromium.sh) ***\n`,
  );
}

describe.skipIf(!present)('the HTML report in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      // A freshly installed Chromium builds its font cache on the first launch: slow on a busy machine.
      timeout: 150_000,
    });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    cleanupTempDirs();
  });

  it('renders every chart with the right marks, with no network and no console error', async () => {
    const dir = tempDir();
    const state = join(dir, 'state');
    writeHtmlCorpus(state);
    const out = join(dir, 'report.html');
    const r = spawnSync(process.execPath, [CLI, 'report', '--format', 'html', '--out', out], { env: { ...process.env, FORGE_DIR: state }, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);

    const context = await browser.newContext({ offline: true, viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    const foreign: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file://')) return route.continue();
      foreign.push(url);
      return route.abort();
    });
    await page.goto(`file://${out}`);

    const charts = page.locator('figure.chart svg');
    expect(await charts.count()).toBe(4); // turns, surfaces, reliability, tools
    const turns = charts.nth(0);
    expect(await turns.locator('g.layer_0_marks path').count()).toBe(TURNS); // one point per turn
    expect(await turns.locator('g.layer_1_marks path').count()).toBe(TURNS); // one confidence square per turn
    expect(await charts.nth(1).locator('g.mark-rect.role-mark path').count()).toBe(2); // auth, docs

    // One bar per confidence bin, with heights in the known shares 1/6 … 5/6.
    const bars = charts.nth(2).locator('g.mark-rect.role-mark path');
    expect(await bars.count()).toBe(CONFIDENCES.length);
    // (Run in the page: a browser's DOM, not this file's types.)
    const heights = await bars.evaluateAll((paths) => paths.map((p) => (p as unknown as { getBBox(): { height: number } }).getBBox().height));
    const tallest = Math.max(...heights);
    const shares = heights.map((h) => h / tallest).sort((a, b) => a - b);
    shares.forEach((share, i) => expect(share).toBeCloseTo((i + 1) / 5, 2));
    expect(await charts.nth(2).locator('text', { hasText: 'n=6' }).count()).toBe(CONFIDENCES.length);

    // One bar per tool, its length the share that succeeded (Bash 3/4, Write and Edit 1).
    const tools = charts.nth(3).locator('g.mark-rect.role-mark path');
    expect(await tools.count()).toBe(new Set(TOOL_CALLS.map(([tool]) => tool)).size);
    const widths = await tools.evaluateAll((paths) => paths.map((p) => (p as unknown as { getBBox(): { width: number } }).getBBox().width));
    expect(Math.min(...widths) / Math.max(...widths)).toBeCloseTo(0.75, 2);

    // Every chart is an image with a name and a description.
    for (let i = 0; i < 4; i++) {
      expect(await charts.nth(i).getAttribute('role')).toBe('img');
      expect(await charts.nth(i).locator('desc').count()).toBe(1);
    }
    // A needs-review link lands on its details.
    await page.locator('ul a[href^="#turn-"]').first().click();
    expect(await page.evaluate('document.querySelector(location.hash)?.tagName')).toBe('SECTION');

    const shots = join(KIT_ROOT, 'test-output');
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: join(shots, 'html-report.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: join(shots, 'html-report-dark.png'), fullPage: false });
    expect(await page.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(13, 17, 23)');
    await context.close();

    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
  });
});
