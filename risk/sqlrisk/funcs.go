package sqlrisk

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// sideEffect names the built-in functions that keep a call from being
// auto-run, with the sentence an approval card shows. danger marks the ones
// SPEC §2 rule 4 lists, and GET_LOCK: its lock stays with the pooled
// connection after the call, and a read-only transaction does not refuse
// it, so the LLM's low risk_level must not auto-run it.
var sideEffect = map[string]struct {
	reason string
	danger bool
}{
	"load_file":                         {"LOAD_FILE() reads a file on the database server", true},
	"password":                          {"PASSWORD() prints a password hash", true},
	"old_password":                      {"OLD_PASSWORD() prints a password hash", true},
	"sleep":                             {"SLEEP() holds the connection and does nothing", false},
	"benchmark":                         {"BENCHMARK() burns server CPU", false},
	"get_lock":                          {"GET_LOCK() takes a named lock that outlives the query and the read-only transaction", true},
	"release_lock":                      {"RELEASE_LOCK() releases a named lock", false},
	"release_all_locks":                 {"RELEASE_ALL_LOCKS() releases named locks", false},
	"nextval":                           {"NEXTVAL() advances a sequence", false},
	"setval":                            {"SETVAL() changes a sequence", false},
	"master_pos_wait":                   {"MASTER_POS_WAIT() waits on replication", false},
	"source_pos_wait":                   {"SOURCE_POS_WAIT() waits on replication", false},
	"master_gtid_wait":                  {"MASTER_GTID_WAIT() waits on replication", false},
	"wait_for_executed_gtid_set":        {"WAIT_FOR_EXECUTED_GTID_SET() waits on replication", false},
	"wait_until_sql_thread_after_gtids": {"WAIT_UNTIL_SQL_THREAD_AFTER_GTIDS() waits on replication", false},
	"wsrep_sync_wait_upto_gtid":         {"WSREP_SYNC_WAIT_UPTO_GTID() waits on replication", false},
}

// builtin holds the names of MySQL and MariaDB built-in functions that only
// compute a value. Any other name may be a stored function, which can write,
// so a call to it is not auto-run. The list includes the internal names the
// parser gives to operators and keyword syntax (plus, insert_func, ...).
var builtin = func() map[string]struct{} {
	names := strings.Fields(`
and cast leftshift rightshift or ge le eq ne lt gt plus minus bitand bitor mod
bitxor div mul not bitneg intdiv xor nulleq unaryplus unaryminus in like ilike
case regexp regexp_like regexp_substr regexp_instr regexp_replace isnull istrue
istrue_with_null isfalse row setvar getvar values bit_count getparam coalesce
greatest least interval abs acos asin atan atan2 ceil ceiling conv cos cot crc32
crc32c degrees exp floor ln log log2 log10 pi pow power radians rand round sign
sin sqrt tan truncate adddate addtime convert_tz curdate current_date
current_time current_timestamp curtime date date_add date_format date_sub
datediff day dayname dayofmonth dayofweek dayofyear extract from_days
from_unixtime get_format hour localtime localtimestamp makedate maketime
microsecond minute month monthname now period_add period_diff quarter
sec_to_time second str_to_date subdate subtime sysdate time time_format
time_to_sec timediff timestamp timestampadd timestampdiff to_days to_seconds
unix_timestamp utc_date utc_time utc_timestamp week weekday weekofyear year
yearweek last_day add_months ascii bin concat concat_ws convert elt export_set
field format from_base64 insert_func instr lcase left length lengthb locate lower
lpad ltrim make_set mid oct octet_length ord position quote repeat replace
reverse right rtrim space strcmp substring substr substring_index to_base64 trim
translate upper ucase hex unhex rpad bit_length char_func char chr char_length
character_length find_in_set weight_string soundex charset coercibility
collation connection_id current_user current_role database found_rows
last_insert_id row_count schema session_user system_user user version
format_bytes format_pico_time format_nano_time if ifnull nullif nvl nvl2
any_value default_func inet_aton inet_ntoa inet6_aton inet6_ntoa is_free_lock
is_ipv4 is_ipv4_compat is_ipv4_mapped is_ipv6 is_used_lock is_uuid name_const
uuid uuid_v4 uuid_v7 uuid_version uuid_timestamp uuid_short uuid_to_bin
bin_to_uuid sys_guid grouping aes_decrypt aes_encrypt des_decrypt des_encrypt
encrypt old_password compress decode encode md5 password random_bytes sha1 sha
sha2 kdf uncompress uncompressed_length validate_password_strength json_type
json_extract json_unquote json_array json_object json_merge json_set json_insert
json_replace json_remove json_overlaps json_contains json_memberof
json_contains_path json_valid json_array_append json_array_insert
json_merge_patch json_merge_preserve json_pretty json_quote json_schema_valid
json_schema_validation_report json_search json_storage_free json_storage_size
json_depth json_keys json_length json_value json_query json_exists
json_detailed json_loose json_compact json_equals json_normalize
json_array_intersect json_object_filter_keys json_object_to_array
json_key_value lastval median sformat natural_sort_key to_char regexp_like
ps_current_thread_id ps_thread_id statement_digest statement_digest_text
icu_version roles_graphml gtid_subset gtid_subtract binlog_gtid_pos
wsrep_last_seen_gtid wsrep_last_written_gtid last_value column_get
column_json column_list column_exists column_check column_create column_add
column_delete extractvalue updatexml point linestring polygon multipoint
multilinestring multipolygon geometrycollection geomfromtext geomfromwkb
pointfromtext astext aswkt asbinary aswkb srid dimension envelope glength
numpoints x y decode_histogram`)
	// DATE '…', TIME '…' and TIMESTAMP '…' literals are calls of internal
	// names in the parser's tree.
	names = append(names, ast.DateLiteral, ast.TimeLiteral, ast.TimestampLiteral)
	m := make(map[string]struct{}, len(names))
	for _, n := range names {
		m[n] = struct{}{}
	}
	return m
}()

// sysFunctions holds the functions of the sys schema that MySQL and MariaDB
// ship; they only read. Other schema-qualified calls are stored functions.
var sysFunctions = func() map[string]struct{} {
	names := strings.Fields(`
extract_schema_from_file_name extract_table_from_file_name format_bytes
format_path format_statement format_time list_add list_drop
ps_is_account_enabled ps_is_consumer_enabled ps_is_instrument_default_enabled
ps_is_instrument_default_timed ps_is_thread_instrumented ps_thread_account
ps_thread_id ps_thread_stack ps_thread_trx_info quote_identifier
sys_get_config version_major version_minor version_patch`)
	m := make(map[string]struct{}, len(names))
	for _, n := range names {
		m[n] = struct{}{}
	}
	return m
}()

// isBuiltin reports whether the lower-case name is a known built-in that only
// computes a value. Spatial functions (ST_*, MBR*) are pure as a family.
func isBuiltin(name string) bool {
	if _, ok := builtin[name]; ok {
		return true
	}
	return strings.HasPrefix(name, "st_") || strings.HasPrefix(name, "mbr")
}
