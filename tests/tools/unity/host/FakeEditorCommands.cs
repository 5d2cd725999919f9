using AgentSdk.Unity.Bridge;
namespace AgentSdk.Unity.Bridge.TestHost { public sealed class FakeEditorCommands : IBridgeCommandSet { public void Register(CommandRegistry r) {} } }
