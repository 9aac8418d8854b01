import { chromium, type Browser } from 'playwright-core'
import { requireExecutable, skipWithout } from './executables.ts'

/**
 * Debian's build of Chromium's headless shell: the browser tests drive it instead of downloading
 * one of their own. It renders as Chromium does without the desktop browser around it, which
 * costs about half the CPU of the full `chromium` in headless mode.
 */
const CHROMIUM = '/usr/bin/chromium-headless-shell'
const PACKAGE = 'chromium-headless-shell'

/** Why the browser tests cannot run here, or false when they can. */
export const chromiumSkip = skipWithout(CHROMIUM, PACKAGE)

/** Quiet and self-contained: no GPU, no updates, no sync, no calls home, no QUIC. */
const FLAGS = [
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
  requireExecutable(CHROMIUM, PACKAGE)
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS })
  return { browser, close: () => browser.close() }
}
