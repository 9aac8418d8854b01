import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

/** Debian's Chromium: the browser tests drive it instead of downloading one of their own. */
export const CHROMIUM = '/usr/bin/chromium'

/**
 * Why the browser tests cannot run here, or false when they can. With CI=true they never skip:
 * without Chromium they fail.
 */
export const chromiumSkip: string | false =
  existsSync(CHROMIUM) || process.env.CI === 'true' ? false : `SKIPPED: no Chromium at ${CHROMIUM} (install the Debian package "chromium")`

/** Quiet and self-contained: no GPU, no updates, no sync, no calls home, no QUIC. */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export interface LaunchedBrowser {
  browser: Browser
  close(): Promise<void>
}

/**
 * Chromium with a fresh profile, so no earlier run leaves state behind: Playwright gives every
 * `launch` a new temporary user-data-dir and removes it on close.
 */
export async function launchChromium(): Promise<LaunchedBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`CI=true needs Chromium at ${CHROMIUM} for the browser tests`)
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS })
  return { browser, close: () => browser.close() }
}
