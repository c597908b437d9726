package xxljob

import (
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// glueBean is xxl-job's glue type of a job run by a registered handler.
const glueBean = "BEAN"

// glueTypes maps Carillon's script types to xxl-job's GLUE types.
var glueTypes = map[carillonv1.ScriptType]string{
	carillonv1.ScriptType_SCRIPT_TYPE_SHELL:      "GLUE_SHELL",
	carillonv1.ScriptType_SCRIPT_TYPE_PYTHON:     "GLUE_PYTHON",
	carillonv1.ScriptType_SCRIPT_TYPE_NODEJS:     "GLUE_NODEJS",
	carillonv1.ScriptType_SCRIPT_TYPE_PHP:        "GLUE_PHP",
	carillonv1.ScriptType_SCRIPT_TYPE_POWERSHELL: "GLUE_POWERSHELL",
	carillonv1.ScriptType_SCRIPT_TYPE_GROOVY:     "GLUE_GROOVY",
}

// GlueType returns xxl-job's glue type for script type t: BEAN for none.
func GlueType(t carillonv1.ScriptType) string {
	if g, ok := glueTypes[t]; ok {
		return g
	}
	return glueBean
}

// ScriptType returns Carillon's script type for xxl-job's glue type g:
// UNSPECIFIED for BEAN, false for a type Carillon does not know.
// GLUE_PYTHON2 (3.2 and later) is taken as Python: the executor picks the
// interpreter by the glue type it is sent, and Carillon sends GLUE_PYTHON.
func ScriptType(g string) (carillonv1.ScriptType, bool) {
	if g == glueBean {
		return carillonv1.ScriptType_SCRIPT_TYPE_UNSPECIFIED, true
	}
	if g == "GLUE_PYTHON2" {
		return carillonv1.ScriptType_SCRIPT_TYPE_PYTHON, true
	}
	for t, name := range glueTypes {
		if name == g {
			return t, true
		}
	}
	return 0, false
}

// blockStrategies maps Carillon's block strategies to xxl-job's.
var blockStrategies = map[carillonv1.BlockStrategy]string{
	carillonv1.BlockStrategy_BLOCK_STRATEGY_UNSPECIFIED:   "SERIAL_EXECUTION",
	carillonv1.BlockStrategy_BLOCK_STRATEGY_SERIAL:        "SERIAL_EXECUTION",
	carillonv1.BlockStrategy_BLOCK_STRATEGY_DISCARD_LATER: "DISCARD_LATER",
	carillonv1.BlockStrategy_BLOCK_STRATEGY_COVER_EARLY:   "COVER_EARLY",
}

// resultStatus maps an xxl-job handle code to a run status: 200
// SUCCEEDED, 502 TIMED_OUT, anything else FAILED.
func resultStatus(code int) carillonv1.RunStatus {
	switch code {
	case codeSuccess:
		return carillonv1.RunStatus_RUN_STATUS_SUCCEEDED
	case codeTimeout:
		return carillonv1.RunStatus_RUN_STATUS_TIMED_OUT
	default:
		return carillonv1.RunStatus_RUN_STATUS_FAILED
	}
}
