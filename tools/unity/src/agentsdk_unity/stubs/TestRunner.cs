// Stand-ins for com.unity.test-framework's TestRunnerApi: a run reports one passing test per name asked for.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;

namespace UnityEditor.TestTools.TestRunner.Api
{
    [Flags]
    public enum TestMode { EditMode = 1, PlayMode = 2 }

    public enum TestStatus { Skipped, Passed, Failed, Inconclusive }

    public class Filter
    {
        public TestMode testMode;
        public string[] testNames;
        public string[] groupNames;
        public string[] categoryNames;
        public string[] assemblyNames;
    }

    public class ExecutionSettings
    {
        public Filter[] filters;
        public ExecutionSettings(params Filter[] filtersToExecute) { filters = filtersToExecute; }
    }

    public interface ITestAdaptor
    {
        string Name { get; }
        string FullName { get; }
    }

    public interface ITestResultAdaptor
    {
        ITestAdaptor Test { get; }
        string Name { get; }
        string FullName { get; }
        TestStatus TestStatus { get; }
        string Message { get; }
        double Duration { get; }
        int PassCount { get; }
        int FailCount { get; }
        int SkipCount { get; }
        bool HasChildren { get; }
        IEnumerable<ITestResultAdaptor> Children { get; }
    }

    public interface ICallbacks
    {
        void RunStarted(ITestAdaptor testsToRun);
        void RunFinished(ITestResultAdaptor result);
        void TestStarted(ITestAdaptor test);
        void TestFinished(ITestResultAdaptor result);
    }

    public class TestRunnerApi : UnityEngine.ScriptableObject
    {
        private readonly List<ICallbacks> _callbacks = new List<ICallbacks>();

        public void RegisterCallbacks<T>(T testCallbacks, int priority = 0) where T : ICallbacks => _callbacks.Add(testCallbacks);
        public void UnregisterCallbacks<T>(T testCallbacks) where T : ICallbacks => _callbacks.Remove(testCallbacks);

        public string Execute(ExecutionSettings executionSettings)
        {
            string[] names = executionSettings.filters.SelectMany(f => f.testNames ?? new string[0]).ToArray();
            if (names.Length == 0) names = new[] { "StubTests.EditorIsReachable" };
            var leaves = names.Select(n => new StubResult(n, n.EndsWith("Fails") ? TestStatus.Failed : TestStatus.Passed, null)).ToList();
            var root = new StubResult("EditMode", leaves.Any(l => l.TestStatus == TestStatus.Failed) ? TestStatus.Failed : TestStatus.Passed, leaves);
            var snapshot = _callbacks.ToList();
            Task.Delay(100).ContinueWith(_ => { foreach (ICallbacks c in snapshot) c.RunFinished(root); });
            return Guid.NewGuid().ToString("N");
        }

        private sealed class StubResult : ITestResultAdaptor, ITestAdaptor
        {
            private readonly List<StubResult> _children;
            public StubResult(string fullName, TestStatus status, List<StubResult> children)
            {
                FullName = fullName;
                Name = fullName.Split('.').Last();
                TestStatus = status;
                _children = children ?? new List<StubResult>();
            }
            public ITestAdaptor Test => this;
            public string Name { get; }
            public string FullName { get; }
            public TestStatus TestStatus { get; }
            public string Message => TestStatus == TestStatus.Failed ? "Expected: True  But was: False" : "";
            public double Duration => 0.01;
            public int PassCount => HasChildren ? _children.Count(c => c.TestStatus == TestStatus.Passed) : (TestStatus == TestStatus.Passed ? 1 : 0);
            public int FailCount => HasChildren ? _children.Count(c => c.TestStatus == TestStatus.Failed) : (TestStatus == TestStatus.Failed ? 1 : 0);
            public int SkipCount => 0;
            public bool HasChildren => _children.Count > 0;
            public IEnumerable<ITestResultAdaptor> Children => _children;
        }
    }
}
