import { type Crew, Flow, listen, start } from '@crewline/runtime';

export interface ReportState {
  sections: { part: string; outputs: string[] }[];
}

/**
 * The flow shape of the growth and realistic benches: ten methods in a chain, each running the crew
 * `crewFor(label)` builds (label p1…p10) and keeping every task output in the state.
 */
export function tenPartFlowClass(
  crewFor: (label: string) => Crew,
  topic: string,
  flowName = 'ReportFlow',
): typeof Flow<ReportState> {
  class ReportFlow extends Flow<ReportState> {
    static flowName = flowName;
    initialState: ReportState = { sections: [] };
    async part(label: string) {
      const output = await crewFor(label).kickoff({ inputs: { topic }, bus: this.bus });
      this.state.sections.push({ part: label, outputs: output.tasksOutput.map((task) => task.raw) });
      return output.raw.slice(0, 200);
    }
    @start() async p1() {
      return this.part('p1');
    }
    @listen('p1') async p2() {
      return this.part('p2');
    }
    @listen('p2') async p3() {
      return this.part('p3');
    }
    @listen('p3') async p4() {
      return this.part('p4');
    }
    @listen('p4') async p5() {
      return this.part('p5');
    }
    @listen('p5') async p6() {
      return this.part('p6');
    }
    @listen('p6') async p7() {
      return this.part('p7');
    }
    @listen('p7') async p8() {
      return this.part('p8');
    }
    @listen('p8') async p9() {
      return this.part('p9');
    }
    @listen('p9') async p10() {
      return this.part('p10');
    }
  }
  return ReportFlow;
}
