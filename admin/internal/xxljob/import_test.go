package xxljob

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestImportVersions imports a dump of each xxl-job schema (2.2 with
// job_cron, 2.4 with title and job_desc, 3.5 with name and
// --complete-insert) and compares the request with its golden file.
func TestImportVersions(t *testing.T) {
	t.Parallel()
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	dumps, err := filepath.Glob("testdata/import/*.sql")
	if err != nil || len(dumps) == 0 {
		t.Fatalf("no dumps: %v", err)
	}
	for _, path := range dumps {
		name := strings.TrimSuffix(filepath.Base(path), ".sql")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			req, err := Import(string(src), ImportOptions{TimeZone: "Asia/Shanghai", DBLocation: shanghai, AllowScripts: name == "xxl-job-2.4"})
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "import", name+".golden.json"), stableJSON(t, req))
		})
	}
}

// TestImportBadRows: a row that cannot be converted is a RowError naming
// its table, id and reason.
func TestImportBadRows(t *testing.T) {
	t.Parallel()
	const groups = "INSERT INTO `xxl_job_group` (`id`,`app_name`,`title`,`address_type`,`address_list`) VALUES (1,'app','t',0,NULL);\n"
	const cols = "INSERT INTO `xxl_job_info` (`id`,`job_group`,`job_desc`,`author`,`schedule_type`,`schedule_conf`,`misfire_strategy`," +
		"`executor_route_strategy`,`executor_handler`,`executor_block_strategy`,`executor_timeout`,`executor_fail_retry_count`," +
		"`glue_type`,`child_jobid`,`trigger_status`) VALUES "
	tests := []struct {
		name, dump, table, id, reason string
	}{
		{"FixDelay", groups + cols + "(7,1,'d','a','FIX_DELAY','5','DO_NOTHING','FIRST','h','SERIAL_EXECUTION',0,0,'BEAN','',0);", JobTable, "7", "schedule_type"},
		{"FixRateNotSeconds", groups + cols + "(8,1,'d','a','FIX_RATE','5m','DO_NOTHING','FIRST','h','SERIAL_EXECUTION',0,0,'BEAN','',0);", JobTable, "8", "schedule_conf"},
		{"Route", groups + cols + "(9,1,'d','a','NONE','','DO_NOTHING','NEAREST','h','SERIAL_EXECUTION',0,0,'BEAN','',0);", JobTable, "9", "executor_route_strategy"},
		{"Misfire", groups + cols + "(10,1,'d','a','NONE','','RETRY','FIRST','h','SERIAL_EXECUTION',0,0,'BEAN','',0);", JobTable, "10", "misfire_strategy"},
		{"Glue", groups + cols + "(11,1,'d','a','NONE','','DO_NOTHING','FIRST','h','SERIAL_EXECUTION',0,0,'GLUE_RUBY','',0);", JobTable, "11", "glue_type"},
		{"Child", groups + cols + "(12,1,'d','a','NONE','','DO_NOTHING','FIRST','h','SERIAL_EXECUTION',0,0,'BEAN','3,x',0);", JobTable, "12", "child_jobid"},
		{"Timeout", groups + cols + "(13,1,'d','a','NONE','','DO_NOTHING','FIRST','h','SERIAL_EXECUTION',-5,0,'BEAN','',0);", JobTable, "13", "executor_timeout"},
		{"AddressType", "INSERT INTO `xxl_job_group` (`id`,`app_name`,`title`,`address_type`,`address_list`) VALUES (4,'app','t',2,NULL);", GroupTable, "4", "address_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Import(tt.dump, ImportOptions{})
			var re *RowError
			if !errors.As(err, &re) || re.Table != tt.table || re.ID != tt.id || !strings.HasPrefix(re.Reason, tt.reason) {
				t.Fatalf("Import = %v, want a RowError of %s id %s about %s", err, tt.table, tt.id, tt.reason)
			}
		})
	}
	// A dump that is not one: a clear error, no request.
	for _, dump := range []string{"", "SELECT 1;", "INSERT INTO `xxl_job_group` VALUES (1,'app','t',0,NULL);",
		"INSERT INTO `xxl_job_group` (`id`,`app_name`) VALUES (1,'app);"} {
		if req, err := Import(dump, ImportOptions{}); err == nil {
			t.Errorf("Import(%q) = %v, want an error", dump, req)
		}
	}
}
