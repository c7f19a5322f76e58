"""Parses a Prometheus text exposition from stdin with prometheus_client's own parser (what a
Prometheus-compatible scraper would do) and prints each family's name and series count; exits
non-zero, with the parser's error, on anything it cannot read."""
import sys

from prometheus_client.parser import text_string_to_metric_families

for family in text_string_to_metric_families(sys.stdin.read()):
    print(family.name, len(family.samples))
