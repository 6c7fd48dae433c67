# Vendored projects used as test data (their own tests run inside throwaway
# repositories, never as part of Meridian's suite).
collect_ignore_glob = ["minicache/*"]
