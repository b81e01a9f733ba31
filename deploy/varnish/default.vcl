vcl 4.1;
# Varnish in front of edgecms edges (deploy/compose.yaml).
#
# - Caches Fetch API answers by URL and APIKey header, for their s-maxage;
#   preview answers (Cache-Control: no-store) and management calls pass.
# - Purge by tag: the publisher sends PURGE / with the header
#   "Surrogate-Key: <tag> <tag>..." (EDGECMS_PURGE_METHOD=PURGE,
#   EDGECMS_PURGE_HEADERS='Surrogate-Key: {{tags}}'); every object whose
#   Surrogate-Key header (set by the edge) holds one of the tags is banned,
#   and no other.
# - Stale content: while an edge is healthy an expired object is served
#   for its stale-while-revalidate (60 s) as it is fetched again; while
#   every edge is down, for its stale-if-error (86400 s for published
#   objects), so reads go on when edges, origins and database are all
#   down.

import std;
import directors;

include "backends.vcl";

# Who may purge: the publishers. compose.yaml runs them on its private
# network; list your publishers' addresses instead.
acl purgers {
    "127.0.0.1";
    "::1";
    "10.0.0.0"/8;
    "172.16.0.0"/12;
    "192.168.0.0"/16;
}

sub vcl_recv {
    set req.backend_hint = edges.backend();

    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(403, "Forbidden"));
        }
        if (!req.http.Surrogate-Key) {
            return (synth(400, "Surrogate-Key header required"));
        }
        # Tags hold letters, digits and - _ . : (see publisher/README.md):
        # anything else is refused, dots are escaped, and whole
        # space-separated tags are matched.
        std.collect(req.http.Surrogate-Key, " ");
        set req.http.X-Purge-Tags = regsuball(req.http.Surrogate-Key, "^\s+|\s+$", "");
        if (req.http.X-Purge-Tags !~ "^[A-Za-z0-9_:.-]+(\s+[A-Za-z0-9_:.-]+)*$") {
            return (synth(400, "Bad Surrogate-Key"));
        }
        set req.http.X-Purge-Pattern = "(^|\s)(" + regsuball(regsuball(req.http.X-Purge-Tags, "\.", "\\."), "\s+", "|") + ")(\s|$)";
        ban("obj.http.Surrogate-Key ~ " + req.http.X-Purge-Pattern);
        return (synth(200, "Purged"));
    }

    # Only stale-while-revalidate while the edges are healthy; a sick
    # backend leaves each object's full grace (its stale-if-error).
    if (std.healthy(req.backend_hint)) {
        set req.grace = 60s;
    }

    # Fetch API requests carry their key in the APIKey header: the builtin
    # rules cache them (GET, no Authorization, no cookie), keyed below.
}

sub vcl_hash {
    hash_data(req.url);
    if (req.http.host) {
        hash_data(req.http.host);
    } else {
        hash_data(server.ip);
    }
    # A fetch key and a missing or wrong key get different answers.
    hash_data(req.http.APIKey);
    return (lookup);
}

sub vcl_backend_response {
    # Keep published objects past their TTL for their stale-if-error, to
    # be served while no edge answers (see vcl_recv).
    if (beresp.http.Cache-Control ~ "stale-if-error=[0-9]+") {
        set beresp.grace = std.duration(regsub(beresp.http.Cache-Control, "^.*stale-if-error=([0-9]+).*$", "\1") + "s", 60s);
    }
}

sub vcl_deliver {
    # Whether Varnish answered from its cache (the edge's own X-Cache says
    # whether the edge did).
    if (obj.hits > 0) {
        set resp.http.X-Varnish-Cache = "HIT";
    } else {
        set resp.http.X-Varnish-Cache = "MISS";
    }
}
