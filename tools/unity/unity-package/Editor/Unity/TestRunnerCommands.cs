// tests.run: run EditMode tests through the Test Framework's TestRunnerApi and report each result.
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using UnityEditor.TestTools.TestRunner.Api;
using UnityEngine;

namespace AgentSdk.Unity.Bridge.Editor
{
    /// <summary>Runs EditMode tests and waits for the run to finish.</summary>
    public sealed class TestRunnerCommands : IBridgeCommandSet
    {
        private readonly IMainThreadDispatcher _main;

        public TestRunnerCommands(IMainThreadDispatcher main) { _main = main; }

        public void Register(CommandRegistry registry)
        {
            registry.Add("tests.run", async (args, token) =>
            {
                var collector = new ResultCollector();
                string[] names = args.Has("test_names")
                    ? ((List<object>)args.GetValue("test_names")).Select(n => n.ToString()).ToArray()
                    : null;
                string[] groups = args.Has("group") ? new[] { args.GetString("group") } : null;
                await _main.Run(() =>
                {
                    var api = ScriptableObject.CreateInstance<TestRunnerApi>();
                    collector.Api = api;
                    api.RegisterCallbacks(collector);
                    var filter = new Filter { testMode = TestMode.EditMode, testNames = names, groupNames = groups };
                    api.Execute(new ExecutionSettings(filter));
                    return true;
                });
                double seconds = args.GetNumber("timeout_seconds", 600);
                Task finished = await Task.WhenAny(collector.Done.Task, Task.Delay(System.TimeSpan.FromSeconds(seconds)));
                if (finished != collector.Done.Task)
                    throw new BridgeException(ErrorCodes.Timeout, "The test run did not finish within " + seconds + " s");
                return collector.Done.Task.Result;
            });
        }

        /// <summary>Collects leaf results; completes when the run finishes.</summary>
        private sealed class ResultCollector : ICallbacks
        {
            public readonly TaskCompletionSource<object> Done = new TaskCompletionSource<object>(TaskCreationOptions.RunContinuationsAsynchronously);
            public TestRunnerApi Api;

            public void RunStarted(ITestAdaptor testsToRun) { }

            public void TestStarted(ITestAdaptor test) { }

            public void TestFinished(ITestResultAdaptor result) { }

            public void RunFinished(ITestResultAdaptor result)
            {
                var leaves = new List<object>();
                Collect(result, leaves);
                if (Api != null) Api.UnregisterCallbacks(this);
                Done.TrySetResult(new Dictionary<string, object>
                {
                    { "passed", result.PassCount }, { "failed", result.FailCount }, { "skipped", result.SkipCount },
                    { "duration_seconds", result.Duration }, { "results", leaves },
                });
            }

            private static void Collect(ITestResultAdaptor node, List<object> into)
            {
                if (node.HasChildren)
                {
                    foreach (ITestResultAdaptor child in node.Children) Collect(child, into);
                    return;
                }
                into.Add(new Dictionary<string, object>
                {
                    { "name", node.Name }, { "full_name", node.FullName }, { "status", node.TestStatus.ToString() },
                    { "message", node.Message ?? "" }, { "duration_seconds", node.Duration },
                });
            }
        }
    }
}
