package dashboards

import (
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// ClusterLabel is the target label that names a Kafka cluster in the scrape
// config; the exporter never sets it itself.
const ClusterLabel = "cluster"

// datasource is the templated Prometheus data source every panel, target and
// variable uses, so one dashboard works against any Prometheus.
func datasource() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}
}

// query is a range query; refIDs are assigned by the panel helpers.
func query(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		Datasource(datasource()).
		Expr(expr).
		LegendFormat(legend).
		Range()
}

// tableQuery is an instant query returning one row per series.
func tableQuery(expr string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		Datasource(datasource()).
		Expr(expr).
		Format(prometheus.PromQueryFormatTable).
		Instant()
}

// withRefIDs names targets A, B, C... in order: Grafana needs unique refIds to
// merge table queries and to keep overrides stable.
func withRefIDs(queries []*prometheus.DataqueryBuilder) []cog.Builder[variants.Dataquery] {
	targets := make([]cog.Builder[variants.Dataquery], 0, len(queries))
	for i, q := range queries {
		targets = append(targets, q.RefId(string(rune('A'+i))))
	}
	return targets
}

// The SDK defaults hide the legend and leave the tooltip mode empty; every
// panel sets both explicitly.
func legend() *common.VizLegendOptionsBuilder {
	return common.NewVizLegendOptionsBuilder().
		ShowLegend(true).
		DisplayMode(common.LegendDisplayModeTable).
		Placement(common.LegendPlacementBottom).
		Calcs([]string{"lastNotNull", "max"})
}

func tooltip() *common.VizTooltipOptionsBuilder {
	return common.NewVizTooltipOptionsBuilder().
		Mode(common.TooltipDisplayModeMulti).
		Sort(common.SortOrderDescending)
}

func thresholds(redFrom float64) *dashboard.ThresholdsConfigBuilder {
	return dashboard.NewThresholdsConfigBuilder().
		Mode(dashboard.ThresholdsModeAbsolute).
		Steps([]dashboard.Threshold{
			{Value: nil, Color: "green"},
			{Value: cog.ToPtr(redFrom), Color: "red"},
		})
}

// timeSeries is a line chart of one or more queries.
func timeSeries(title, description, unit string, width, height uint32, queries ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource()).
		Unit(unit).
		Span(width).
		Height(height).
		Targets(withRefIDs(queries)).
		Legend(legend()).
		Tooltip(tooltip()).
		LineWidth(1).
		FillOpacity(10).
		ShowPoints(common.VisibilityModeNever)
}

// bars draws counts of discrete events (regressions, truncations) as bars,
// so a single event does not look like a trend.
func bars(title, description string, width, height uint32, queries ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	return timeSeries(title, description, "short", width, height, queries...).
		DrawStyle(common.GraphDrawStyleBars).
		FillOpacity(80).
		Decimals(0)
}

// steps draws gauges that change in whole steps (ISR size, leader id).
func steps(title, description, unit string, width, height uint32, queries ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	return timeSeries(title, description, unit, width, height, queries...).
		LineInterpolation(common.LineInterpolationStepAfter).
		Decimals(0)
}

// statusStat is one tile of the status strip: green at 0, red from redFrom.
func statusStat(title, description string, redFrom float64, expr string) *stat.PanelBuilder {
	return stat.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource()).
		Unit("short").
		Decimals(0).
		Span(3).
		Height(4).
		Targets(withRefIDs([]*prometheus.DataqueryBuilder{query(expr, "").Instant()})).
		Thresholds(thresholds(redFrom)).
		ColorMode(common.BigValueColorModeBackground).
		GraphMode(common.BigValueGraphModeNone).
		TextMode(common.BigValueTextModeValue).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Values(false))
}

// timeline shows a discrete value per series over time, e.g. the leader.
func timeline(title, description string, width, height uint32, queries ...*prometheus.DataqueryBuilder) *statetimeline.PanelBuilder {
	return statetimeline.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource()).
		Unit("none").
		Span(width).
		Height(height).
		Targets(withRefIDs(queries)).
		Legend(common.NewVizLegendOptionsBuilder().
			ShowLegend(true).
			DisplayMode(common.LegendDisplayModeList).
			Placement(common.LegendPlacementBottom)).
		Tooltip(tooltip()).
		ShowValue(common.VisibilityModeAuto).
		MergeValues(true)
}

// column is one instant query of a per-partition table and the header its
// value column gets.
type column struct {
	header string
	expr   string
}

// partitionTable joins instant queries on their labels into one row per
// partition ("merge"), hides the bookkeeping columns and renames the value
// columns. sortBy must be one of the headers.
func partitionTable(title, description string, height uint32, sortBy string, columns ...column) *table.PanelBuilder {
	queries := make([]*prometheus.DataqueryBuilder, 0, len(columns))
	rename := map[string]string{}
	order := map[string]int{ClusterLabel: 0, "topic": 1, "partition": 2}
	for i, c := range columns {
		queries = append(queries, tableQuery(c.expr))
		valueField := "Value #" + string(rune('A'+i))
		rename[valueField] = c.header
		order[valueField] = 3 + i
	}
	return table.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource()).
		Unit("none").
		Span(24).
		Height(height).
		Targets(withRefIDs(queries)).
		Transformations([]dashboard.DataTransformerConfig{
			{Id: "merge", Options: map[string]any{}},
			{Id: "organize", Options: map[string]any{
				"excludeByName": map[string]bool{"Time": true, "__name__": true, "job": true, "instance": true},
				"renameByName":  rename,
				"indexByName":   order,
			}},
		}).
		SortBy([]cog.Builder[common.TableSortByFieldState]{
			common.NewTableSortByFieldStateBuilder().DisplayName(sortBy).Desc(false),
		}).
		Filterable(true).
		ShowHeader(true)
}

// promqlWindows lists the range selectors a query may use instead of
// $__rate_interval; the lint test reads it too.
var promqlWindows = []string{"[$__rate_interval]", "[$__range]", "[1h]", "[24h]"}

// join concatenates label matchers, skipping empty ones.
func join(matchers ...string) string {
	var out []string
	for _, m := range matchers {
		if m != "" {
			out = append(out, m)
		}
	}
	return strings.Join(out, ", ")
}
