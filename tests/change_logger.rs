//! ChangeLogger end to end: `ahp run post-tool-use` records the change as
//! an aid signal whose `payload.data` is the structured change, in the
//! verdict and in the log.

use crate::common::*;
use serde_json::json;

#[test]
fn an_edit_is_recorded_with_its_files_and_sizes() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  post-tool-use:\n    - oracle: ChangeLogger\n      config: {log_level: debug}\n",
    );
    let ctx = json!({
        "session_id": "s1",
        "tool": {"name": "edit", "raw_name": "Edit", "input": {
            "file_path": "src/lib.rs",
            "old_string": "fn a() {}\n",
            "new_string": "fn a() {}\nfn b() {}\nfn c() {}\n"
        }}
    });
    let out = sb.run("post-tool-use", ctx.to_string());
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "aid");
    let s = &v["signals"][0];
    assert_eq!(s["header"]["type"], "change");
    assert_eq!(
        s["payload"]["context_info"],
        "Edit src/lib.rs: +2 -0 lines (+20 bytes)"
    );
    assert_eq!(s["context"]["files"], json!(["src/lib.rs"]));
    let want = json!({
        "tool": "Edit", "files": ["src/lib.rs"], "lines_added": 2, "lines_removed": 0,
        "bytes_added": 20, "bytes_removed": 0,
        "operations": [{"path": "src/lib.rs", "op": "edit", "lines_added": 2, "lines_removed": 0,
                        "bytes_added": 20, "bytes_removed": 0}]
    });
    assert_eq!(s["payload"]["data"], want);
    let log = sb.log_lines();
    let rec = log.iter().find(|l| l["kind"] == "signal").unwrap();
    assert_eq!(rec["header"]["source"], "ChangeLogger");
    assert_eq!(rec["payload"]["data"], want);
}

#[test]
fn a_command_and_a_read() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  post-tool-use:\n    - oracle: change-logger\n      config: {fields: [tool, command, exit_code]}\n",
    );
    let ctx = json!({"tool": {"name": "shell", "raw_name": "Bash",
        "input": {"command": "cargo build --release"}, "response": {"exit_code": 0}}});
    let out = sb.run("post-tool-use", ctx.to_string());
    let v = json_out(&out);
    assert_eq!(
        v["signals"][0]["payload"]["data"],
        json!({"tool": "Bash", "command": "cargo build --release", "exit_code": 0})
    );
    // A read changes nothing: no signal.
    let ctx =
        json!({"tool": {"name": "read", "raw_name": "Read", "input": {"file_path": "src/lib.rs"}}});
    let out = sb.run("post-tool-use", ctx.to_string());
    assert_eq!(json_out(&out)["outcome"], "accept");
}

#[test]
fn a_bad_field_names_the_key() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:\n  post-tool-use:\n    - oracle: ChangeLogger\n      config:\n        fields: [tool, byte]\n",
    );
    let out = sb.ahp().args(["validate"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("fields.1") && err.contains("did you mean `bytes`"),
        "{err}"
    );
}
