# The edges Varnish sends misses to, probed on /healthz (the process
# answers; edges serve published objects without their origin, so an edge
# stays in rotation while the origin is down). compose.yaml names them
# edge1 and edge2; change the hosts (and add backends) for your own edges.
probe edge_live {
    .url = "/healthz";
    .interval = 1s;
    .timeout = 1s;
    .window = 3;
    .threshold = 2;
    .initial = 2;
}

backend edge1 {
    .host = "edge1";
    .port = "8080";
    .probe = edge_live;
    .connect_timeout = 1s;
    .first_byte_timeout = 30s;
}

backend edge2 {
    .host = "edge2";
    .port = "8080";
    .probe = edge_live;
    .connect_timeout = 1s;
    .first_byte_timeout = 30s;
}

sub vcl_init {
    new edges = directors.round_robin();
    edges.add_backend(edge1);
    edges.add_backend(edge2);
}
