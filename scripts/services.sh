#!/usr/bin/env bash
# The executables of the stack, in start order: name, port, and the variables each one reads besides the
# common DATABASE_URL / REDIS_URL / HTTP_HOST / HTTP_PORT / LOG_LEVEL (see docs/configuration.md).
LANTERN_SERVICES=(
  "identity 8081"
  "media 8082"
  "astrology 8083"
  "push-worker 8087"
  "gateway 8080"
)
