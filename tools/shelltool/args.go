package shelltool

// args are the arguments of execute_command (SPEC §1). risk_level is read by
// the assessor; tools.DecodeArgs accepts and ignores it.
type args struct {
	Command        string   `json:"command"`
	Workdir        string   `json:"workdir"`
	TimeoutSeconds *float64 `json:"timeout_seconds"`
}
