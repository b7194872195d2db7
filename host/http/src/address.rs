//! Classification of IP addresses a plugin's request could reach.
//!
//! Anything that is not ordinary public unicast is *special*: loopback, private, link-local,
//! shared (CGNAT), cloud metadata, documentation, multicast and reserved ranges. IPv6 forms
//! that embed an IPv4 address (mapped, compatible, SIIT-translated, NAT64, 6to4) are
//! classified by the embedded address, so `::ffff:127.0.0.1` is loopback. Whether a special
//! address may still be reached is decided by the policy, not here.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of address an IP is, from the point of view of outbound plugin traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// Ordinary public unicast: allowed whenever the origin is allowed.
    Public,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10/8`, `172.16/12`, `192.168/16`, `fc00::/7` (and deprecated site-local `fec0::/10`).
    Private,
    /// `169.254/16`, `fe80::/10`.
    LinkLocal,
    /// Carrier-grade NAT shared space `100.64/10`.
    SharedCgnat,
    /// `0.0.0.0/8` ("this network") and `::`.
    Unspecified,
    /// `255.255.255.255`.
    Broadcast,
    /// `224/4`, `ff00::/8`.
    Multicast,
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// Cloud instance metadata endpoints: `169.254.169.254`, `fd00:ec2::254`.
    Metadata,
    /// Other reserved or non-global space (`240/4`, benchmarking, IETF assignments, IPv6 outside
    /// `2000::/3`, ...).
    Reserved,
}

impl AddressClass {
    /// Whether the address needs an explicit grant (everything but [`AddressClass::Public`]).
    pub fn is_special(self) -> bool {
        self != Self::Public
    }

    /// Whether no grant can make the address reachable: these are not unicast destinations
    /// (and `0.0.0.0` silently means "this host" on most systems).
    pub fn is_never_reachable(self) -> bool {
        matches!(self, Self::Unspecified | Self::Broadcast | Self::Multicast)
    }

    /// A short human description, used in denial messages.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Loopback => "loopback",
            Self::Private => "private",
            Self::LinkLocal => "link-local",
            Self::SharedCgnat => "shared (CGNAT)",
            Self::Unspecified => "unspecified",
            Self::Broadcast => "broadcast",
            Self::Multicast => "multicast",
            Self::Documentation => "documentation",
            Self::Metadata => "cloud metadata",
            Self::Reserved => "reserved",
        }
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// Classifies `ip`.
pub fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn in_v6(ip: Ipv6Addr, net: [u16; 8], prefix: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
    u128::from(ip) & mask == u128::from(Ipv6Addr::from(net)) & mask
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    use AddressClass::*;
    const TABLE: &[([u8; 4], u32, AddressClass)] = &[
        ([169, 254, 169, 254], 32, Metadata),
        ([255, 255, 255, 255], 32, Broadcast),
        ([0, 0, 0, 0], 8, Unspecified),
        ([127, 0, 0, 0], 8, Loopback),
        ([10, 0, 0, 0], 8, Private),
        ([172, 16, 0, 0], 12, Private),
        ([192, 168, 0, 0], 16, Private),
        ([169, 254, 0, 0], 16, LinkLocal),
        ([100, 64, 0, 0], 10, SharedCgnat),
        ([224, 0, 0, 0], 4, Multicast),
        ([192, 0, 2, 0], 24, Documentation),
        ([198, 51, 100, 0], 24, Documentation),
        ([203, 0, 113, 0], 24, Documentation),
        ([192, 0, 0, 0], 24, Reserved),
        ([192, 88, 99, 0], 24, Reserved),
        ([198, 18, 0, 0], 15, Reserved),
        ([240, 0, 0, 0], 4, Reserved),
    ];
    TABLE
        .iter()
        .find(|(net, prefix, _)| in_v4(ip, *net, *prefix))
        .map_or(Public, |(_, _, class)| *class)
}

/// The IPv4 address embedded in an IPv6 transition form, if `ip` is one.
pub fn embedded_ipv4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = u128::from(ip);
    let low32 = Ipv4Addr::from(bits as u32);
    let forms: [([u16; 8], u32); 5] = [
        ([0, 0, 0, 0, 0, 0xffff, 0, 0], 96),    // IPv4-mapped
        ([0, 0, 0, 0, 0xffff, 0, 0, 0], 96),    // SIIT IPv4-translated
        ([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96), // NAT64 well-known prefix
        ([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48), // NAT64 local-use prefix
        ([0, 0, 0, 0, 0, 0, 0, 0], 96),         // IPv4-compatible (deprecated)
    ];
    if let Some((net, prefix)) = forms.iter().find(|(net, p)| in_v6(ip, *net, *p)) {
        // `::` and `::1` sit inside the compatible range but are IPv6's own addresses.
        if *prefix == 96 && *net == [0; 8] && bits <= 1 {
            return None;
        }
        return Some(low32);
    }
    if in_v6(ip, [0x2002, 0, 0, 0, 0, 0, 0, 0], 16) {
        return Some(Ipv4Addr::from((bits >> 80) as u32));
    }
    None
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    use AddressClass::*;
    if let Some(v4) = embedded_ipv4(ip) {
        return classify_v4(v4);
    }
    const TABLE: &[([u16; 8], u32, AddressClass)] = &[
        ([0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254], 128, Metadata),
        ([0, 0, 0, 0, 0, 0, 0, 0], 128, Unspecified),
        ([0, 0, 0, 0, 0, 0, 0, 1], 128, Loopback),
        ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, Multicast),
        ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, LinkLocal),
        ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, Private),
        ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, Private),
        ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, Documentation),
        ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, Documentation),
        // IETF protocol assignments (Teredo, benchmarking, ORCHID, ...).
        ([0x2001, 0, 0, 0, 0, 0, 0, 0], 23, Reserved),
    ];
    if let Some((_, _, class)) = TABLE.iter().find(|(n, p, _)| in_v6(ip, *n, *p)) {
        return *class;
    }
    // Only 2000::/3 is allocated as global unicast.
    if in_v6(ip, [0x2000, 0, 0, 0, 0, 0, 0, 0], 3) {
        Public
    } else {
        Reserved
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AddressClass::*;

    #[test]
    fn classification_table() {
        let table: &[(&str, AddressClass)] = &[
            ("8.8.8.8", Public),
            ("93.184.215.14", Public),
            ("172.32.0.1", Public),
            ("100.128.0.1", Public),
            ("127.0.0.1", Loopback),
            ("127.255.255.254", Loopback),
            ("10.0.0.1", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("169.254.1.1", LinkLocal),
            ("169.254.169.254", Metadata),
            ("100.64.0.1", SharedCgnat),
            ("100.127.255.255", SharedCgnat),
            ("0.0.0.0", Unspecified),
            ("0.1.2.3", Unspecified),
            ("255.255.255.255", Broadcast),
            ("224.0.0.1", Multicast),
            ("239.255.255.250", Multicast),
            ("192.0.2.1", Documentation),
            ("198.51.100.7", Documentation),
            ("203.0.113.9", Documentation),
            ("198.18.0.1", Reserved),
            ("240.0.0.1", Reserved),
            ("2606:4700::1111", Public),
            ("2001:4860:4860::8888", Public),
            ("::1", Loopback),
            ("::", Unspecified),
            ("fe80::1", LinkLocal),
            ("fc00::1", Private),
            ("fd12:3456::1", Private),
            ("fec0::1", Private),
            ("fd00:ec2::254", Metadata),
            ("ff02::1", Multicast),
            ("2001:db8::1", Documentation),
            ("3fff::1", Documentation),
            ("2001::1", Reserved),
            ("4000::1", Reserved),
            ("100::1", Reserved),
            // IPv4 embedded in IPv6 is judged by the IPv4 address.
            ("::ffff:127.0.0.1", Loopback),
            ("::ffff:10.1.2.3", Private),
            ("::ffff:169.254.169.254", Metadata),
            ("::ffff:8.8.8.8", Public),
            ("::ffff:0:127.0.0.1", Loopback),
            ("::127.0.0.1", Loopback),
            ("::10.0.0.1", Private),
            ("64:ff9b::127.0.0.1", Loopback),
            ("64:ff9b::a9fe:a9fe", Metadata),
            ("64:ff9b::8.8.8.8", Public),
            ("64:ff9b:1::10.0.0.1", Private),
            ("2002:7f00:1::", Loopback),
            ("2002:a9fe:a9fe::1", Metadata),
            ("2002:0808:0808::1", Public),
        ];
        for (text, expected) in table {
            let ip: IpAddr = text.parse().expect("test address parses");
            assert_eq!(classify(ip), *expected, "{text}");
            assert_eq!(classify(ip).is_special(), *expected != Public, "{text}");
        }
    }

    #[test]
    fn never_reachable_classes() {
        assert!(Unspecified.is_never_reachable());
        assert!(Broadcast.is_never_reachable());
        assert!(Multicast.is_never_reachable());
        assert!(!Loopback.is_never_reachable());
        assert!(!Metadata.is_never_reachable());
    }
}
