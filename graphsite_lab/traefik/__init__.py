"""The lab's stand-in for Traefik's file provider: it reads the dynamic directory as Traefik does (`files`),
refuses what lies outside the subset graphsite and Dokploy use (`subset`), translates the rest into the edge
Caddy's JSON configuration (`translate`, pure) and loads it through Caddy's admin API (`watcher`)."""
