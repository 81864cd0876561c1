//! MCP tasks (the tasks extension of the 2026-07-28 revision): long work — a replay, a
//! wait — of a client that declared the extension is answered at once with a task that
//! runs on; `tasks/get` polls it, `tasks/cancel` stops it as a cancelled call would. A task
//! belongs to the session or context that started it: to any other its id is unknown.

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CreateTaskResult, GetTaskParams,
    GetTaskResult, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::{ErrorData, RoleServer};

use super::{KaptureServer, SessionId};

/// How long a finished task's answer is kept for polling.
const KEEP_MS: u64 = 10 * 60 * 1000;
/// At most this many tasks are known at once (finished ones included, until they expire).
const MAX_TASKS: usize = 64;

tokio::task_local! {
    /// Set while a task runs its call: the call runs, it does not start another task.
    static IN_TASK: ();
}

/// The tasks of every session, and whose each is.
#[derive(Default)]
pub(super) struct Tasks {
    manager: TaskManager,
    owners: Mutex<HashMap<String, SessionId>>,
}

impl Tasks {
    /// Whether `tool`'s call is run as a task: long work, a client that declared tasks,
    /// not already inside one.
    pub(super) fn eligible(
        tool: &str,
        replays: bool,
        context: &RequestContext<RoleServer>,
    ) -> bool {
        let declared = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        declared && IN_TASK.try_with(|_| ()).is_err() && (replays || tool == "browser_wait_for")
    }

    fn owned(&self, id: &str, by: SessionId) -> Result<(), ErrorData> {
        let owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        match owners.get(id) {
            Some(owner) if *owner == by => Ok(()),
            // Another's task is no task to this caller: the same answer as an unknown id.
            _ => Err(ErrorData::invalid_params(
                format!("unknown task {id:?}"),
                None,
            )),
        }
    }

    /// Forget tasks the manager no longer knows (expired), so the owners stay bounded.
    fn prune(&self, owners: &mut HashMap<String, SessionId>) {
        owners.retain(|id, _| self.manager.get_task(id).is_ok());
    }
}

impl KaptureServer {
    /// Start `request` as a task of this session: its answer is the task's seed state (sent
    /// through the exit by `run_call`).
    pub(super) fn start_task(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CreateTaskResult, ErrorData> {
        let tasks = &self.shared.tasks;
        {
            let mut owners = tasks.owners.lock().unwrap_or_else(|e| e.into_inner());
            tasks.prune(&mut owners);
            if owners.len() >= MAX_TASKS {
                return Err(ErrorData::invalid_request(
                    format!("at most {MAX_TASKS} tasks at once; poll or cancel one first"),
                    None,
                ));
            }
        }
        let me = self.clone();
        // The request is answered now, which ends its own cancel token: the task's run has
        // one of its own, ended by tasks/cancel (dropping the run).
        let mut context = context;
        context.ct = tokio_util::sync::CancellationToken::new();
        let mut options = TaskOptions::new().with_ttl_ms(KEEP_MS);
        options.status_message = Some(format!("running {}", request.name));
        let task = tasks.manager.spawn(options, move |task| {
            Box::pin(async move {
                let run = async {
                    IN_TASK
                        .scope((), me.run_call(request, context))
                        .await
                        .into_inner()
                };
                tokio::select! {
                    res = run => match res {
                        Ok(CallToolResponse::Complete(result)) => Ok(result),
                        Ok(_) => Err(TaskExit::Error(ErrorData::internal_error(
                            "the call asked for input, which a task cannot give it",
                            None,
                        ))),
                        Err(e) => Err(TaskExit::Error(e)),
                    },
                    // Dropping the call stops its command in the browser too.
                    () = task.cancelled() => Err(TaskExit::Cancelled),
                }
            })
        });
        tasks
            .owners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(task.task_id.clone(), self.id());
        Ok(CreateTaskResult::new(task))
    }

    pub(super) fn get_own_task(&self, p: GetTaskParams) -> Result<GetTaskResult, ErrorData> {
        let tasks = &self.shared.tasks;
        tasks.owned(&p.task_id, self.id())?;
        tasks.manager.get_task(&p.task_id).map(GetTaskResult::new)
    }

    pub(super) fn update_own_task(&self, p: UpdateTaskParams) -> Result<(), ErrorData> {
        let tasks = &self.shared.tasks;
        tasks.owned(&p.task_id, self.id())?;
        tasks.manager.update_task(&p.task_id, p.input_responses)
    }

    pub(super) fn cancel_own_task(&self, p: CancelTaskParams) -> Result<(), ErrorData> {
        let tasks = &self.shared.tasks;
        tasks.owned(&p.task_id, self.id())?;
        tasks.manager.cancel_task(&p.task_id)
    }
}
