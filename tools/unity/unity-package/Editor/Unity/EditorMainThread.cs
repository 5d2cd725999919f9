// Runs bridge work on Unity's main thread by pumping a queue from EditorApplication.update.
using System;
using System.Collections.Concurrent;
using System.Threading;
using System.Threading.Tasks;
using UnityEditor;

namespace AgentSdk.Unity.Bridge.Editor
{
    /// <summary>Queues work from the bridge's socket threads and runs it in EditorApplication.update.</summary>
    public sealed class EditorMainThread : IMainThreadDispatcher
    {
        private readonly ConcurrentQueue<Action> _queue = new ConcurrentQueue<Action>();
        private int _mainThreadId = -1;

        /// <summary>Call on the main thread; hooks the editor update loop.</summary>
        public void Attach()
        {
            _mainThreadId = Thread.CurrentThread.ManagedThreadId;
            EditorApplication.update += Pump;
        }

        public void Detach()
        {
            EditorApplication.update -= Pump;
        }

        public Task<T> Run<T>(Func<T> work)
        {
            if (Thread.CurrentThread.ManagedThreadId == _mainThreadId)
            {
                try { return Task.FromResult(work()); }
                catch (Exception e) { return Task.FromException<T>(e); }
            }
            var done = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
            _queue.Enqueue(() =>
            {
                try { done.TrySetResult(work()); }
                catch (Exception e) { done.TrySetException(e); }
            });
            return done.Task;
        }

        /// <summary>Runs what is queued, for at most ~10 ms a frame so the editor stays responsive.</summary>
        private void Pump()
        {
            DateTime until = DateTime.UtcNow.AddMilliseconds(10);
            Action next;
            while (DateTime.UtcNow < until && _queue.TryDequeue(out next)) next();
        }
    }
}
