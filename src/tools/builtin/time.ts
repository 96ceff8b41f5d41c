/**
 * `get_current_time`: models do not know what time it is. Returns the instant in UTC and
 * the wall-clock time of an IANA time zone (the host's by default).
 */
import { defineTool } from '../define.js';
import type { Tool } from '../types.js';

/** Options of {@link createCurrentTimeTool}; both exist for tests and embedding. */
export interface CurrentTimeOptions {
  /** The clock (default `() => new Date()`). */
  now?: () => Date;
  /** Zone used when the model gives none (default: the host's zone). */
  defaultTimeZone?: string;
}

/** What the tool reports, also kept as the result's `details`. */
export interface CurrentTime {
  /** The instant, ISO 8601 in UTC: `2025-03-30T12:34:56.789Z`. */
  utc: string;
  /** IANA name of the zone, as asked for (capitalization fixed): `Europe/Berlin`. */
  timeZone: string;
  /** Wall-clock time there, ISO 8601 with offset: `2025-03-30T14:34:56+02:00`. */
  local: string;
  /** UTC offset there: `+02:00`. */
  offset: string;
  weekday: string;
}

/**
 * Resolves `instant` in `timeZone`. Throws a RangeError naming the zone when it is not a
 * known IANA zone. Zone names are matched case-insensitively (`europe/berlin` works).
 */
export function timeIn(instant: Date, timeZone: string): CurrentTime {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      weekday: 'long',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    });
  } catch {
    throw new RangeError(
      `unknown time zone ${JSON.stringify(timeZone)}: use an IANA name such as "UTC", "Europe/Berlin" or "America/New_York"`,
    );
  }
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(instant)) parts[part.type] = part.value;
  // longOffset prints "GMT+02:00", or plain "GMT" for a zero offset.
  const offset = (parts.timeZoneName ?? 'GMT').replace('GMT', '') || '+00:00';
  const date = `${parts.year}-${parts.month}-${parts.day}`;
  const time = `${parts.hour}:${parts.minute}:${parts.second}`;
  return {
    utc: instant.toISOString(),
    timeZone: displayName(timeZone, format.resolvedOptions().timeZone),
    local: `${date}T${time}${offset}`,
    offset,
    weekday: parts.weekday ?? '',
  };
}

/**
 * ICU resolves some zones to legacy aliases (Asia/Kolkata → Asia/Calcutta); keep the name
 * asked for, taking only ICU's capitalization of it (europe/berlin → Europe/Berlin).
 */
function displayName(asked: string, resolved: string): string {
  return asked.toLowerCase() === resolved.toLowerCase() ? resolved : asked;
}

/** Creates the `get_current_time` tool. */
export function createCurrentTimeTool(options: CurrentTimeOptions = {}): Tool {
  const now = options.now ?? (() => new Date());
  return defineTool({
    name: 'get_current_time',
    description:
      "Get the current date and time. Use it whenever the answer depends on today's date or the time of day. " +
      'Optionally give an IANA time zone such as "Europe/Berlin"; the default is the host\'s zone.',
    parameters: {
      type: 'object',
      properties: {
        timezone: { type: 'string', description: 'IANA time zone name, e.g. "UTC", "Asia/Tokyo", "America/New_York".' },
      },
      additionalProperties: false,
    },
    risk: 'read',
    effect: 'pure',
    execute: (args) => {
      const zone =
        typeof args.timezone === 'string' && args.timezone.trim() !== ''
          ? args.timezone.trim()
          : (options.defaultTimeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone);
      let current: CurrentTime;
      try {
        current = timeIn(now(), zone);
      } catch (error) {
        return { content: (error as Error).message, isError: true };
      }
      const { local, timeZone, weekday, offset, utc } = current;
      const wallClock = `${weekday}, ${local.slice(0, 10)} ${local.slice(11, 19)} (UTC${offset})`;
      const text = `Current time in ${timeZone}: ${wallClock}\nISO 8601: ${local}\nUTC: ${utc}`;
      return { content: text, details: current };
    },
  });
}
