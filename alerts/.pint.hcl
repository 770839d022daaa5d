# pint (github.com/cloudflare/pint) policy for alerts/kafka-replication.rules.yml:
#   pint --offline --config alerts/.pint.hcl lint --min-severity=info --fail-on=warning alerts/
# The install script builds pint into the tool cache when it can.

rule {
  match {
    kind = "alerting"
  }

  label "severity" {
    severity = "bug"
    value    = "(critical|warning|info)"
    required = true
  }

  annotation "summary" {
    severity = "bug"
    required = true
  }

  annotation "description" {
    severity = "bug"
    required = true
  }

  # The anchor is the lowercased alert name; pint templates have no lower
  # function, hence the case-insensitive match.
  annotation "runbook_url" {
    severity = "bug"
    value    = "(?i)https://github.com/kafka-replication-exporter/kafka_replication_exporter/blob/main/alerts/runbook.md#{{ $alert }}"
    required = true
  }
}
