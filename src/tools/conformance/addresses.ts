import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** The kinds of address a media link may not point to (or only when allowed); public addresses have none. */
type AddressKind = 'unspecified' | 'link-local' | 'cloud metadata' | 'loopback' | 'private';

/**
 * The ranges of each kind, most specific first (the two metadata addresses sit inside private ranges).
 * BlockList matches an IPv4-mapped IPv6 address (::ffff:169.254.169.254) against the IPv4 ranges, so
 * those forms need no rows of their own. `always`: refused whatever the target and the options.
 */
const RANGES: readonly { kind: AddressKind; always: boolean; cidrs: readonly string[] }[] = [
  // 0.0.0.0/8 is "this network": on Linux a connection to 0.0.0.0 reaches the machine itself.
  { kind: 'unspecified', always: true, cidrs: ['0.0.0.0/8', '::/128'] },
  // The cloud metadata services (AWS, Azure, GCP, Oracle at 169.254.169.254) and their link-local neighbours.
  { kind: 'link-local', always: true, cidrs: ['169.254.0.0/16', 'fe80::/10'] },
  // The metadata services outside link-local: Alibaba Cloud's, and AWS's IPv6 one.
  { kind: 'cloud metadata', always: true, cidrs: ['100.100.100.200/32', 'fd00:ec2::254/128'] },
  { kind: 'loopback', always: false, cidrs: ['127.0.0.0/8', '::1/128'] },
  // RFC 1918, CGNAT (RFC 6598) and IPv6 unique local addresses.
  {
    kind: 'private',
    always: false,
    cidrs: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7'],
  },
];

const LISTS = RANGES.map(({ kind, cidrs }) => {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network, prefix] = cidr.split('/') as [string, string];
    list.addSubnet(network, Number(prefix), isIP(network) === 6 ? 'ipv6' : 'ipv4');
  }
  return { kind, list };
});

/**
 * The kind of an IP address (v4, v6 or v4-mapped v6), or undefined for a public one or a string that is no IP address.
 */
export function addressKind(address: string): AddressKind | undefined {
  const family = isIP(address);
  if (!family) return undefined;
  return LISTS.find(({ list }) => list.check(address, family === 6 ? 'ipv6' : 'ipv4'))?.kind;
}

const ALWAYS: ReadonlySet<AddressKind> = new Set(RANGES.filter((r) => r.always).map((r) => r.kind));

/** Whether an address is one of those a target on loopback or private addresses may hand out links to. */
const isLocal = (address: string) => {
  const kind = addressKind(address);
  return kind === 'loopback' || kind === 'private';
};

/** Resolves a host name to every address it stands for. */
export type Lookup = (hostname: string) => Promise<readonly string[]>;

/** The system resolver (what fetch itself uses): getaddrinfo, so /etc/hosts and `localhost` count. */
const systemLookup: Lookup = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** The addresses of a URL's hostname: a literal IP as it is (URL has already normalized 0x7f.1 and the like), else the
 * resolver's answer. */
export async function addressesOf(hostname: string, resolve: Lookup = systemLookup): Promise<readonly string[]> {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(bare) ? [bare] : resolve(bare);
}

/** An address as the reports show it: an IPv4-mapped IPv6 address (URL writes ::ffff:a9fe:a9fe) with its IPv4 part
 * dotted. */
function shown(address: string): string {
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!mapped) return address;
  const [high, low] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return `::ffff:${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/**
 * Why a link whose host has these addresses is not fetched, or undefined when it may be: a
 * link-local, unspecified or metadata address never; a loopback or private one unless
 * `allowPrivate`. Every address counts (a name with a public and a private address is refused), and
 * the always-refused kinds are named first. `host` is the name the addresses came from.
 */
export function addressRefusal(host: string, addresses: readonly string[], allowPrivate: boolean): string | undefined {
  const named = addresses.map((address) => ({ address, kind: addressKind(address) }));
  const worst =
    named.find((a) => a.kind && ALWAYS.has(a.kind)) ?? (allowPrivate ? undefined : named.find((a) => a.kind));
  if (!worst) return undefined;
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const where = bare === worst.address ? shown(worst.address) : `${bare} resolves to ${shown(worst.address)}`;
  const what = `${worst.kind === 'unspecified' ? 'an' : 'a'} ${worst.kind} address (${where})`;
  return ALWAYS.has(worst.kind!)
    ? `${what}, which the runner does not fetch`
    : `${what}, which the runner does not fetch from a public target (--media-allow-private allows it)`;
}

/**
 * Whether a target's host is on loopback or private addresses only: a developer's local gateway, or
 * the mock, whose media links point at itself. Its links may then point at such addresses too. A
 * name that does not resolve is not local (the run's probe reports it).
 */
export async function isLocalTarget(hostname: string, resolve: Lookup = systemLookup): Promise<boolean> {
  try {
    const addresses = await addressesOf(hostname, resolve);
    return addresses.length > 0 && addresses.every(isLocal);
  } catch {
    return false;
  }
}

/**
 * Whether a run fetches media links on loopback and private addresses: when asked
 * (--media-allow-private), or when the target itself is on such addresses.
 */
export async function mediaAllowsPrivate(
  baseUrl: string,
  asked: boolean,
  resolve: Lookup = systemLookup,
): Promise<boolean> {
  return asked || isLocalTarget(new URL(baseUrl).hostname, resolve);
}
