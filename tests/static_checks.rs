//! `ahp validate`'s warnings about a policy that loads but does not do
//! what it says.

use crate::common::{Sandbox, stderr};

#[test]
fn after_a_switched_off_entry_is_a_warning_with_a_fix() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:
  pre-tool-use:
    - oracle: Rules
      id: first
      config: {rules: []}
    - oracle: Rules
      id: second
      after: [first]
      config: {rules: []}
",
    );
    sb.write(
        ".ahp/hooks.local.yaml",
        "hooks:\n  pre-tool-use:\n    - id: first\n      enabled: false\n",
    );
    let out = sb.ahp().arg("validate").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("hooks.yaml:8:14"), "{err}");
    assert!(
        err.contains("runs `after: first`, but `first` is switched off (enabled: false at"),
        "{err}"
    );
    assert!(err.contains("hooks.local.yaml:4:16"), "{err}");
    assert!(err.contains("remove `first` from `after`"), "{err}");
}

/// An entry that an earlier block always pre-empts never decides, and a
/// shadow one never says what it would: `ahp signals tune` names it.
#[test]
fn an_entry_always_preempted_by_an_earlier_block_is_named() {
    let sb = Sandbox::new();
    sb.write(
        ".ahp/hooks.yaml",
        "hooks:
  pre-tool-use:
    - oracle: Rules
      id: no-shell
      priority: 0
      config:
        rules:
          - condition: \"tool.name == shell\"
            intensity: block
            message: no shell today
    - oracle: Rules
      id: trial
      priority: 5
      mode: shadow
      config:
        rules:
          - condition: \"tool.name == shell\"
            intensity: prompt
            message: would ask
",
    );
    for i in 0..20 {
        sb.claude_pre_tool(
            &format!("s{i}"),
            "Bash",
            serde_json::json!({"command": "ls"}),
        )
        .assert()
        .success();
    }
    let out = sb.ahp().args(["signals", "tune"]).output().unwrap();
    let text = crate::common::stdout(&out);
    assert!(
        text.contains(
            "trial (shadow) never ran in 20 selected runs: an earlier block always pre-empts it"
        ),
        "{text}"
    );
}
